// Connecting other AI apps, rendered by React in jsdom against Tauri's IPC mock: nothing is
// connected before the preview is shown and confirmed, the preview says what moves, what stays
// and what the app will run, the secrets move to the keychain by default, and undo is offered
// once connected.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ConnectHosts from "./ConnectHosts";
import type { HostPreview, HostView, ImportReport } from "../ipc";
import { click, mount, settle } from "../testing";

afterEach(() => clearMocks());

const report: ImportReport = {
  format: "mcpServers",
  added: [{ id: "github", name: "github", transport: "stdio", enabled: true, runs: "npx -y github-server" }],
  renamed: [],
  skipped: [],
  rules: [],
  inputs: [],
  secretCandidates: [
    { serverId: "github", location: "env", name: "GITHUB_PERSONAL_ACCESS_TOKEN", suggestedSecret: "GITHUB_PERSONAL_ACCESS_TOKEN" },
  ],
  warnings: [],
};

describe("connecting other AI apps", () => {
  it("previews, connects with the secrets moved, then offers undo", async () => {
    let hosts: HostView[] = [
      { id: "claude-desktop", label: "Claude Desktop", path: "/home/me/.config/Claude/c.json", found: true, backup: null },
      { id: "zed", label: "Zed", path: "/home/me/.config/zed/settings.json", found: false, backup: null },
    ];
    const preview: HostPreview = {
      id: "claude-desktop",
      label: "Claude Desktop",
      path: "/home/me/.config/Claude/c.json",
      report,
      kept: [["legacy-sse", "Toolgate cannot run its sse transport"]],
      notes: ["The original is kept as /home/me/.config/Claude/c.json.toolgate-backup, and `undo` puts it back."],
      command: "/usr/bin/toolgate-app connect --profile claude-desktop",
    };
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "list_hosts") return hosts;
      if (cmd === "preview_host") return preview;
      if (cmd === "connect_host") {
        hosts = hosts.map((h) => (h.id === "claude-desktop" ? { ...h, backup: `${h.path}.toolgate-backup` } : h));
        return null;
      }
      if (cmd === "undo_host") return "/home/me/.config/Claude/c.json";
    });
    const { host, unmount } = await mount(createElement(ConnectHosts));

    const zed = host.querySelector("[data-testid=host-zed] [data-testid=host-preview]") as HTMLButtonElement;
    expect(zed.disabled).toBe(true);
    await click(host.querySelector("[data-testid=host-claude-desktop] [data-testid=host-preview]"));
    await settle();
    expect(calls.some((c) => c.cmd === "connect_host")).toBe(false);
    const plan = host.querySelector("[data-testid=host-plan]") as HTMLElement;
    expect(plan.textContent).toContain("Add github");
    expect(plan.textContent).toContain("Stays in Claude Desktop: legacy-sse");
    expect(plan.querySelector("[data-testid=host-command]")?.textContent).toBe(preview.command);
    expect((plan.querySelector("[data-testid=move-GITHUB_PERSONAL_ACCESS_TOKEN]") as HTMLInputElement).checked).toBe(true);

    await click(plan.querySelector("[data-testid=host-connect]"));
    await settle();
    expect(calls.find((c) => c.cmd === "connect_host")?.args).toEqual({
      host: "claude-desktop",
      choices: {
        inputs: {},
        moveSecrets: [{ serverId: "github", location: "env", name: "GITHUB_PERSONAL_ACCESS_TOKEN" }],
      },
    });
    expect(host.querySelector("[data-testid=hosts-done]")?.textContent).toContain("Claude Desktop is connected");
    await click(host.querySelector("[data-testid=host-claude-desktop] [data-testid=host-undo]"));
    await settle();
    expect(calls.find((c) => c.cmd === "undo_host")?.args).toEqual({ host: "claude-desktop" });
    expect(host.querySelector("[data-testid=hosts-done]")?.textContent).toContain("has its own config back");
    unmount();
  });

  it("shows why a host cannot be connected", async () => {
    mockIPC((cmd) => {
      if (cmd === "list_hosts")
        return [{ id: "cursor", label: "Cursor", path: "/home/me/.cursor/mcp.json", found: true, backup: null }];
      if (cmd === "preview_host")
        throw { kind: "hosts", message: "Cursor is already connected to Toolgate; undo it first" };
    });
    const { host, unmount } = await mount(createElement(ConnectHosts));
    await click(host.querySelector("[data-testid=host-preview]"));
    await settle();
    expect(host.querySelector("[data-testid=hosts-problem]")?.textContent).toContain("already connected");
    expect(host.querySelector("[data-testid=host-plan]")).toBeNull();
    unmount();
  });
});
