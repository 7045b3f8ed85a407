// The tool naming settings, rendered by React in jsdom against Tauri's IPC mock: they load from
// tool_settings, save with set_tool_settings (keeping what the form does not edit, such as the
// tools switched off), and show the backend's message when it refuses.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ToolNaming, { splitPatterns, withEdits } from "./ToolNaming";
import type { CatalogSettings, ServerSnapshot } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const server = (id: string, name: string): ServerSnapshot => ({
  id,
  name,
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: null,
  tools: [],
  resources: [],
  prompts: [],
  roots: [],
  signedIn: null,
  needsScope: null,
  refusedTools: [],
  resourceTemplates: [],
  sandbox: null,
  readsUntrusted: false,
  sendsOut: false,
  reviewResults: [],
});

const servers = [server("everything", "Everything"), server("files", "Files")];

describe("tool naming settings", () => {
  it("loads, saves the right object, and shows the backend's refusal", async () => {
    let stored: CatalogSettings = {
      naming: "auto",
      servers: { everything: { prefix: "ev", exclude: ["delete_*"], disabledTools: ["get-sum"] } },
    };
    const saved: unknown[] = [];
    let refuse: string | null = null;
    mockIPC((cmd, args) => {
      if (cmd === "tool_settings") return stored;
      if (cmd === "set_tool_settings") {
        if (refuse) throw { kind: "settings", message: refuse };
        const tools = (args as { tools: CatalogSettings }).tools;
        saved.push(tools);
        stored = tools;
        return tools;
      }
    });
    const app = await mount(createElement(ToolNaming, { servers }));
    const { host } = app;
    const section = host.querySelector("[data-testid=tool-naming]") as HTMLElement;
    expect(section.getAttribute("aria-labelledby")).toBe(section.querySelector("h2")?.id);
    const radio = (mode: string) => host.querySelector(`[data-testid=naming-${mode}]`) as HTMLInputElement;
    const inServer = (id: string, what: string) =>
      host.querySelector(`[data-testid=naming-server-${id}] [data-testid=naming-${what}]`) as HTMLInputElement;

    expect(radio("auto").checked).toBe(true);
    expect(radio("always").closest("label")?.textContent).toContain("names never change when you add a server");
    expect(inServer("everything", "prefix").value).toBe("ev");
    expect(inServer("everything", "exclude").value).toBe("delete_*");
    expect(inServer("files", "prefix").value).toBe("");
    expect(inServer("files", "prefix").placeholder).toBe("files");

    // Meanwhile a tool is switched off elsewhere: saving keeps it off.
    stored = {
      ...stored,
      servers: { everything: { ...stored.servers!.everything, disabledTools: ["get-sum", "echo"] } },
    };
    await click(radio("always"));
    await type(inServer("files", "prefix"), " fs ");
    await type(inServer("files", "include") as unknown as HTMLTextAreaElement, "read_*, {get,list}_*\nsearch_files\n");
    await type(inServer("everything", "exclude") as unknown as HTMLTextAreaElement, "");
    await click(host.querySelector("[data-testid=naming-save]"));
    await settle();
    expect(saved).toEqual([
      {
        naming: "always",
        servers: {
          everything: { prefix: "ev", disabledTools: ["get-sum", "echo"] },
          files: { prefix: "fs", include: ["read_*", "{get,list}_*", "search_files"] },
        },
      },
    ]);
    expect(host.querySelector("[data-testid=naming-message]")?.textContent).toBe("Tool settings saved.");
    expect(inServer("files", "include").value).toBe("read_*\n{get,list}_*\nsearch_files");

    // A refusal names the field; what was typed stays for fixing.
    refuse = "tools.servers.files.exclude[0]: `[oops` is not a valid glob pattern";
    await type(inServer("files", "exclude") as unknown as HTMLTextAreaElement, "[oops");
    await click(host.querySelector("[data-testid=naming-save]"));
    await settle();
    const message = host.querySelector("[data-testid=naming-message]") as HTMLElement;
    expect(message.getAttribute("role")).toBe("alert");
    expect(message.textContent).toBe(refuse);
    expect(inServer("files", "exclude").value).toBe("[oops");
    expect(saved).toHaveLength(1);
    app.unmount();
  });

  it("splits patterns on commas and new lines, but not inside braces", () => {
    expect(splitPatterns(" a_*, b\n\n{c,d}_*,e ")).toEqual(["a_*", "b", "{c,d}_*", "e"]);
    expect(splitPatterns("")).toEqual([]);
  });

  it("drops a server's entry once nothing is left in it, and only touches what changed", () => {
    const current: CatalogSettings = { naming: "none", servers: { a: { prefix: "x" }, b: { include: ["y"] } } };
    const blank = { prefix: "", include: "", exclude: "", alwaysLoaded: false, pinned: "" };
    const loaded = { a: { ...blank, prefix: "x" }, b: { ...blank, include: "y" } };
    const drafts = { ...loaded, a: blank };
    expect(withEdits(current, "auto", drafts, loaded)).toEqual({ naming: "auto", servers: { b: { include: ["y"] } } });
    expect(withEdits({ naming: "auto" }, "auto", {}, {})).toEqual({ naming: "auto" });
  });

  it("keeps the tool search settings, and saves what is pinned as always loaded", () => {
    const search = { mode: "always" as const, maxTools: 10, maxTokens: 5000 };
    const current: CatalogSettings = { naming: "auto", search };
    expect(withEdits(current, "auto", {}, {})).toEqual({ naming: "auto", search });
    const blank = { prefix: "", include: "", exclude: "", alwaysLoaded: false, pinned: "" };
    const drafts = { a: { ...blank, alwaysLoaded: true }, b: { ...blank, pinned: "read_file, list_directory" } };
    expect(withEdits({ naming: "auto" }, "auto", drafts, {})).toEqual({
      naming: "auto",
      servers: { a: { alwaysLoaded: true }, b: { alwaysLoadedTools: ["read_file", "list_directory"] } },
    });
    // Back to the defaults: nothing is written for search.
    expect(withEdits(current, "auto", {}, {}, { mode: "auto", maxTools: 40, maxTokens: 10000 })).toEqual({
      naming: "auto",
    });
  });
});
