// The add-server dialog, in jsdom against Tauri's IPC mock: a well-known server fills the form,
// its placeholder must be replaced, and the exact command is shown before anything runs; the
// dialog is named, its tabs work from the keyboard, and Escape closes it.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { computeAccessibleName } from "dom-accessibility-api";
import AddServerDialog, { type AddTab } from "./AddServerDialog";
import { WELL_KNOWN } from "../wellKnown";
import { splitCommand } from "./AddServer";
import type { ImportReport } from "../ipc";
import { click, mount, press, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

describe("adding a server", () => {
  it("offers well-known servers whose entries are complete commands or addresses", () => {
    expect(WELL_KNOWN.map((w) => w.id)).toEqual(
      expect.arrayContaining(["filesystem", "memory", "git", "fetch", "time", "github"]),
    );
    for (const w of WELL_KNOWN) {
      if (w.draft.kind === "stdio") expect(splitCommand(w.draft.command).length, w.id).toBeGreaterThan(1);
      else expect(w.draft.url, w.id).toMatch(/^https:\/\//);
    }
  });

  it("fills the form from the list, and shows the command to confirm before it runs", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    const report: ImportReport = {
      format: "singleServer",
      added: [
        {
          id: "filesystem",
          name: "Filesystem",
          transport: "stdio",
          enabled: true,
          runs: "npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
        },
      ],
      renamed: [],
      skipped: [],
      rules: [],
      inputs: [],
      secretCandidates: [],
      warnings: [],
    };
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "preview_import" || cmd === "apply_import") return report;
      if (cmd === "list_servers") return [{ id: "filesystem", name: "Filesystem", status: { state: "ready" } }];
    });
    let tab: AddTab = "wellKnown";
    let closed = false;
    const added: (string | null)[] = [];
    const view = () =>
      createElement(AddServerDialog, {
        tab,
        onTab: (t: AddTab) => {
          tab = t;
          app.root.render(view());
        },
        onClose: () => (closed = true),
        onAdded: (id: string | null) => added.push(id),
      });
    const app = await mount(view());
    const dialog = document.querySelector("[role=dialog]") as HTMLElement;
    expect(computeAccessibleName(dialog)).toBe("Add server");
    expect(dialog.getAttribute("aria-modal")).toBe("true");
    // Focus starts on the selected tab; the arrows move between tabs.
    expect(document.activeElement?.id).toBe("add-tab-wellKnown");
    await press(document.activeElement, "ArrowRight");
    await settle();
    expect(tab).toBe("form");
    await press(document.activeElement, "ArrowLeft");
    await settle();
    expect(tab).toBe("wellKnown");

    await click(document.querySelector("[data-testid=use-filesystem]"));
    await settle();
    expect(tab).toBe("form");
    const command = document.getElementById("add-command") as HTMLInputElement;
    expect(command.value).toBe("npx -y @modelcontextprotocol/server-filesystem <folder>");
    expect((document.getElementById("add-name") as HTMLInputElement).value).toBe("Filesystem");

    // The placeholder must be replaced before anything is checked.
    await click(document.querySelector("[data-testid=add-check]"));
    expect(document.querySelector("[role=alert]")?.textContent).toBe("Replace <folder> with your own value first.");
    expect(calls).toEqual([]);

    await type(command, "npx -y @modelcontextprotocol/server-filesystem /home/me/notes");
    await click(document.querySelector("[data-testid=add-check]"));
    await settle();
    const text = JSON.stringify({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"],
      env: {},
    });
    expect(calls).toEqual([{ cmd: "preview_import", args: { source: { kind: "text", text, name: "Filesystem" } } }]);
    expect(document.querySelector("[data-testid=add-runs]")?.textContent).toBe(
      "npx -y @modelcontextprotocol/server-filesystem /home/me/notes",
    );
    expect(document.querySelector("[data-testid=add-report]")?.textContent).toContain(
      "Toolgate will run this on your computer",
    );
    await click(document.querySelector("[data-testid=add-confirm]"));
    await settle();
    await settle();
    expect(calls[1].cmd).toBe("apply_import");
    expect(added).toEqual(["filesystem"]);
    // It started: the dialog's work is done, and it closes.
    expect(closed).toBe(true);
    closed = false;

    // Tab wraps around inside the dialog.
    const focusable = [...dialog.querySelectorAll<HTMLElement>("button, input, select, textarea")].filter(
      (el) => !el.hasAttribute("disabled") && el.tabIndex >= 0,
    );
    focusable[focusable.length - 1].focus();
    await press(document.activeElement, "Tab");
    expect(document.activeElement).toBe(focusable[0]);
    await press(document.activeElement, "Tab", { shiftKey: true });
    expect(document.activeElement).toBe(focusable[focusable.length - 1]);

    await press(dialog, "Escape");
    expect(closed).toBe(true);
    app.unmount();
  });

  it("reads a chosen file into the JSON box, so it is seen before it is previewed", async () => {
    mockIPC((cmd) => (cmd === "import_sources" ? { claudeDesktop: null } : undefined));
    const app = await mount(
      createElement(AddServerDialog, { tab: "json", onTab: () => undefined, onClose: () => undefined, onAdded: () => undefined }),
    );
    const picker = document.querySelector("[data-testid=import-file]") as HTMLInputElement;
    const file = new File(['{"mcpServers": {"memory": {"command": "npx"}}}'], "mcp.json", { type: "application/json" });
    Object.defineProperty(picker, "files", { value: [file] });
    picker.dispatchEvent(new Event("change", { bubbles: true }));
    await settle(20);
    expect((document.getElementById("import-text") as HTMLTextAreaElement).value).toBe(
      '{"mcpServers": {"memory": {"command": "npx"}}}',
    );
    app.unmount();
  });
});
