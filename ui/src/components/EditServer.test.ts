// Editing a server: the form shows its settings with secret-looking values hidden, and saving
// sends the placeholder back (so the stored value is kept) with the user's changes.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import EditServer from "./EditServer";
import { HIDDEN_VALUE, type ServerConfig } from "../ipc";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(() => clearMocks());
const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));

const stored: ServerConfig = {
  id: "gh",
  name: "GitHub",
  enabled: true,
  startupTimeoutSecs: 120,
  callTimeoutSecs: 60,
  maxCallTimeoutSecs: 600,
  autoRestart: true,
  transport: "stdio",
  command: "npx",
  args: ["-y", "server github"],
  env: { GITHUB_TOKEN: HIDDEN_VALUE, LOG_LEVEL: "debug" },
  cwd: null,
};

describe("editing a server", () => {
  it("keeps hidden values hidden and sends the edit", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    let done = 0;
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "server_config") return stored;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(EditServer, { serverId: "gh", onDone: () => done++ })));
    await settle();
    const command = host.querySelector("#edit-command-gh") as HTMLInputElement;
    expect(command.value).toBe("npx -y 'server github'");
    const pairs = host.querySelector("#edit-pairs-gh") as HTMLTextAreaElement;
    expect(pairs.value).toBe(`GITHUB_TOKEN=${HIDDEN_VALUE}\nLOG_LEVEL=debug`);

    const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")?.set;
    await act(async () => {
      setValue?.call(pairs, `GITHUB_TOKEN=${HIDDEN_VALUE}\nLOG_LEVEL=info`);
      pairs.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => (host.querySelector("[data-testid=save-server]") as HTMLButtonElement).click());
    await settle();
    expect(calls.find((c) => c.cmd === "update_server")?.args).toEqual({
      serverId: "gh",
      server: {
        ...stored,
        args: ["-y", "server github"],
        env: { GITHUB_TOKEN: HIDDEN_VALUE, LOG_LEVEL: "info" },
        // Left on automatic: the era is Toolgate's choice.
        protocolVersion: null,
        // Tool context stays off.
        toolContext: { conversationId: false, meta: {} },
      },
    });
    expect(done).toBe(1);
    act(() => root.unmount());
  });

  it("turns on tool context: the conversation id and keys as a JSON object", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "server_config")
        return { ...stored, toolContext: { conversationId: false, meta: { "example.com/tenant": "acme" } } };
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(EditServer, { serverId: "gh", onDone: () => undefined })));
    await settle();
    const keys = host.querySelector("#edit-context-gh") as HTMLTextAreaElement;
    expect(JSON.parse(keys.value)).toEqual({ "example.com/tenant": "acme" });
    await act(async () => (host.querySelector("#edit-conversation-gh") as HTMLInputElement).click());
    const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")?.set;
    await act(async () => {
      setValue?.call(keys, "not json");
      keys.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => (host.querySelector("[data-testid=save-server]") as HTMLButtonElement).click());
    await settle();
    expect(host.querySelector("[role=alert]")?.textContent).toContain("must be a JSON object");
    expect(calls.some((c) => c.cmd === "update_server")).toBe(false);
    await act(async () => {
      setValue?.call(keys, '{"example.com/region": "eu"}');
      keys.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await act(async () => (host.querySelector("[data-testid=save-server]") as HTMLButtonElement).click());
    await settle();
    const sent = calls.find((c) => c.cmd === "update_server")?.args as { server: ServerConfig };
    expect(sent.server.toolContext).toEqual({ conversationId: true, meta: { "example.com/region": "eu" } });
    act(() => root.unmount());
  });

  it("keeps a server on the older HTTP+SSE transport on it", async () => {
    const sse: ServerConfig = {
      ...stored,
      id: "old",
      transport: "sse",
      url: "https://example.com/sse",
      headers: { Authorization: HIDDEN_VALUE },
    };
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "server_config") return sse;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(EditServer, { serverId: "old", onDone: () => undefined })));
    await settle();
    await act(async () => (host.querySelector("[data-testid=save-server]") as HTMLButtonElement).click());
    await settle();
    const sent = calls.find((c) => c.cmd === "update_server")?.args as { server: ServerConfig };
    expect(sent.server).toMatchObject({ transport: "sse", url: "https://example.com/sse" });
    act(() => root.unmount());
  });

  it("edits how a remote server is signed in to, keeping what the form does not show", async () => {
    const remote: ServerConfig = {
      ...stored,
      id: "ci",
      transport: "http",
      url: "https://mcp.example.com/mcp",
      headers: {},
      oauth: { grant: "clientCredentials", clientId: "toolgate-ci", clientSecret: "${secret:CI}", callbackPort: 47123 },
    };
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "server_config") return remote;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(EditServer, { serverId: "ci", onDone: () => undefined })));
    await settle();
    const grant = host.querySelector("#edit-grant-ci") as HTMLSelectElement;
    expect(grant.value).toBe("clientCredentials");
    expect((host.querySelector("#edit-clientSecret-ci") as HTMLInputElement).value).toBe("${secret:CI}");
    const choose = (select: HTMLSelectElement, value: string) =>
      act(async () => {
        select.value = value;
        select.dispatchEvent(new Event("change", { bubbles: true }));
      });
    await choose(grant, "jwtBearer");
    // A workload has no secret of its own: the token's file or keychain reference instead.
    expect(host.querySelector("#edit-clientSecret-ci")).toBeNull();
    const file = host.querySelector("#edit-assertionFile-ci") as HTMLInputElement;
    const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
    await act(async () => {
      setValue?.call(file, "/var/run/secrets/tokens/mcp");
      file.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await choose(host.querySelector("#edit-dpop-ci") as HTMLSelectElement, "on");
    await act(async () => (host.querySelector("[data-testid=save-server]") as HTMLButtonElement).click());
    await settle();
    const sent = calls.find((c) => c.cmd === "update_server")?.args as { server: ServerConfig };
    expect(sent.server.oauth).toEqual({
      grant: "jwtBearer",
      clientId: "toolgate-ci",
      clientSecret: "${secret:CI}",
      privateKey: null,
      assertion: null,
      assertionFile: "/var/run/secrets/tokens/mcp",
      scopes: [],
      dpop: true,
      callbackPort: 47123,
    });
    act(() => root.unmount());
  });

  it("sends no sign-in settings for a server left on the browser sign-in with nothing set", async () => {
    const plain: ServerConfig = { ...stored, id: "web", transport: "http", url: "https://mcp.example.com/mcp", headers: {} };
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "server_config") return plain;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(EditServer, { serverId: "web", onDone: () => undefined })));
    await settle();
    expect(host.querySelector("[data-testid=sign-in-settings]")).not.toBeNull();
    await act(async () => (host.querySelector("[data-testid=save-server]") as HTMLButtonElement).click());
    await settle();
    const sent = calls.find((c) => c.cmd === "update_server")?.args as { server: ServerConfig };
    expect(sent.server.oauth).toBeNull();
    act(() => root.unmount());
  });
});
