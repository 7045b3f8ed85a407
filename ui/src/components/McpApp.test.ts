// An MCP App's frame and its postMessage bridge, rendered by React in jsdom against Tauri's IPC
// mock: the frame is sandboxed with scripts only and points at the backend's scheme; the app is
// initialized and given the call's input and result; its tools/call and resources/read reach
// only the app commands (the backend binds them to the app's own server); its size is bounded;
// messages from any other window are ignored; what is not offered is refused.
import { afterEach, describe, expect, it, vi } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import McpApp, { appUrl, MAX_HEIGHT } from "./McpApp";
import type { ToolApp } from "../ipc";
import { mount, settle } from "../testing";

afterEach(() => clearMocks());

const app: ToolApp = {
  serverId: "apps",
  resourceUri: "ui://get-time/mcp-app.html",
  arguments: {},
  result: { content: [{ type: "text", text: "2026-11-25T08:32:15Z" }], structuredContent: { time: "2026-11-25T08:32:15Z" } },
};

describe("an MCP App", () => {
  it("is framed sandboxed and speaks the bridge, each call going to the backend for the gate", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      seen.push({ cmd, args });
      if (cmd === "load_app") return { id: "app-1", prefersBorder: true };
      if (cmd === "app_call_tool") return { content: [{ type: "text", text: "later" }] };
      if (cmd === "app_read_resource") throw { kind: "server", message: "no such resource" };
    });
    const { host, unmount } = await mount(createElement(McpApp, { app, serverName: "Apps" }));
    const frame = host.querySelector("[data-testid=mcp-app]") as HTMLIFrameElement;
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.getAttribute("src")).toBe("mcpapp://localhost/app-1");
    expect(frame.getAttribute("title")).toBe("App of Apps");
    expect(seen[0]).toEqual({ cmd: "load_app", args: { serverId: "apps", uri: "ui://get-time/mcp-app.html" } });

    const appWindow = frame.contentWindow as Window;
    const sent = vi.spyOn(appWindow, "postMessage").mockImplementation(() => undefined);
    const fromApp = (data: object, source: Window | null = appWindow) =>
      act(async () => {
        window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", ...data }, source }));
      });

    await fromApp({ id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: {} } });
    expect(sent.mock.calls[0][0]).toMatchObject({
      id: 1,
      result: { protocolVersion: "2026-01-26", hostInfo: { name: "toolgate" }, hostCapabilities: { serverTools: {} } },
    });
    await fromApp({ method: "ui/notifications/initialized" });
    expect(sent.mock.calls[1][0]).toEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: {} } });
    expect(sent.mock.calls[2][0]).toEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: app.result });

    await fromApp({ id: 2, method: "tools/call", params: { name: "get-time", arguments: {} } });
    await settle();
    expect(seen.at(-1)).toEqual({ cmd: "app_call_tool", args: { id: "app-1", name: "get-time", arguments: {} } });
    expect(sent.mock.calls.at(-1)?.[0]).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "later" }] } });

    await fromApp({ id: 3, method: "resources/read", params: { uri: "ui://other" } });
    await settle();
    expect(sent.mock.calls.at(-1)?.[0]).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: "no such resource" } });

    await fromApp({ id: 4, method: "ui/open-link", params: { url: "https://example.com" } });
    expect(sent.mock.calls.at(-1)?.[0]).toMatchObject({ id: 4, error: { code: -32601 } });

    await fromApp({ method: "ui/notifications/size-changed", params: { width: 300, height: 5000 } });
    expect(frame.style.height).toBe(`${MAX_HEIGHT}px`);

    // Another window (the chat itself, another frame) cannot speak for the app.
    const calls = seen.length;
    await fromApp({ id: 5, method: "tools/call", params: { name: "get-time" } }, window);
    await settle();
    expect(seen.length).toBe(calls);

    unmount();
    await settle();
    expect(seen.at(-1)).toEqual({ cmd: "close_app", args: { id: "app-1" } });
  });

  it("says why an app cannot be shown, and uses http on Windows", async () => {
    mockIPC((cmd) => {
      if (cmd === "load_app") throw { kind: "app", message: "ui://x is text/plain, not an app" };
    });
    const { host, unmount } = await mount(createElement(McpApp, { app, serverName: "Apps" }));
    expect(host.querySelector("[data-testid=app-problem]")?.textContent).toContain("not an app");
    expect(host.querySelector("iframe")).toBeNull();
    expect(appUrl("a", true)).toBe("http://mcpapp.localhost/a");
    unmount();
  });
});
