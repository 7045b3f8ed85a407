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
      },
    });
    expect(done).toBe(1);
    act(() => root.unmount());
  });
});
