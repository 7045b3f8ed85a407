// Held tools on a server's card: the accepted text beside the new, as text; Accept sends the
// tool's name, Accept all sends none (all of them).
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import HeldTools from "./HeldTools";
import type { ServerSnapshot, ToolText } from "../ipc";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(() => clearMocks());

const text = (description: string): ToolText => ({
  title: null,
  description,
  inputSchema: { type: "object" },
  outputSchema: null,
  readOnly: false,
  destructive: false,
  idempotent: false,
  openWorld: false,
});

const server = (held: ServerSnapshot["heldTools"]) =>
  ({ id: "files", name: "Files", heldTools: held }) as unknown as ServerSnapshot;

describe("held tools", () => {
  it("shows the accepted text beside the new one, as text, and accepts by name or all", async () => {
    const sent: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "accept_tool_changes") {
        sent.push(args);
        return [];
      }
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () =>
      root.render(
        createElement(HeldTools, {
          server: server([
            { name: "read", before: text("Reads a file"), after: text("Reads a file. <img src=x onerror=alert(1)>") },
            { name: "send", before: null, after: text("Sends mail") },
          ]),
        }),
      ),
    );
    expect(host.querySelector("[role=status]")?.textContent).toContain("2 tools are held");
    expect(host.textContent).toContain("Reads a file. <img src=x onerror=alert(1)>");
    expect(host.querySelector("img")).toBeNull();
    expect(host.textContent).toContain("A new tool: nothing was accepted before.");
    await act(async () => (host.querySelector("[data-testid=accept-read]") as HTMLButtonElement).click());
    await act(async () => (host.querySelector("[data-testid=accept-all]") as HTMLButtonElement).click());
    expect(sent).toEqual([
      { serverId: "files", tools: ["read"] },
      { serverId: "files", tools: null },
    ]);
    act(() => root.unmount());
  });

  it("shows nothing when no tool is held", async () => {
    const host = document.createElement("div");
    const root = createRoot(host);
    await act(async () => root.render(createElement(HeldTools, { server: server(undefined) })));
    expect(host.innerHTML).toBe("");
    act(() => root.unmount());
  });
});
