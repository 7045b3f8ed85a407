// The import form, rendered by React in jsdom against Tauri's IPC mock: a pasted snippet is
// previewed by the backend, the values that look like secrets are offered for the keychain (all
// chosen by default), and the import sends exactly the user's choices.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ImportServers from "./ImportServers";
import type { ImportReport } from "../ipc";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(() => clearMocks());

const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));

const report: ImportReport = {
  format: "mcpServers",
  added: [{ id: "github", name: "github", transport: "stdio", enabled: true, runs: "npx -y github-server" }],
  renamed: [],
  skipped: [{ name: "old", reason: { kind: "unsupportedTransport", transport: "sse" } }],
  rules: [],
  inputs: [],
  secretCandidates: [{ serverId: "github", location: "env", name: "GITHUB_TOKEN", suggestedSecret: "GITHUB_TOKEN" }],
  warnings: [],
};

function type(element: HTMLTextAreaElement, value: string) {
  const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")?.set;
  setValue?.call(element, value);
  element.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("importing servers", () => {
  it("previews, offers secrets for the keychain, and imports with the user's choices", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    let imported = 0;
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "import_sources") return { claudeDesktop: null };
      if (cmd === "preview_import" || cmd === "apply_import") return report;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(ImportServers, { onImported: () => imported++ })));
    await settle();
    expect(host.querySelector("[data-testid=import-claude]")).toBeNull();

    const snippet = '{"mcpServers": {"github": {"command": "npx", "env": {"GITHUB_TOKEN": "ghp_x"}}}}';
    await act(async () => type(host.querySelector("#import-text") as HTMLTextAreaElement, snippet));
    await act(async () => (host.querySelector("[data-testid=import-preview]") as HTMLButtonElement).click());
    await settle();
    const shown = host.querySelector("[data-testid=import-report]")?.textContent ?? "";
    expect(shown).toContain("Add github as github (stdio)");
    expect(shown).toContain("Skip old: Toolgate does not speak the sse transport");
    const move = host.querySelector("[data-testid=move-GITHUB_TOKEN]") as HTMLInputElement;
    expect(move.checked).toBe(true);

    await act(async () => (host.querySelector("[data-testid=import-confirm]") as HTMLButtonElement).click());
    await settle();
    expect(calls.find((c) => c.cmd === "apply_import")?.args).toEqual({
      source: { kind: "text", text: snippet, name: null },
      choices: { inputs: {}, moveSecrets: [{ serverId: "github", location: "env", name: "GITHUB_TOKEN" }] },
    });
    expect(host.querySelector("[data-testid=import-done]")?.textContent).toBe("Imported github.");
    expect(imported).toBe(1);
    act(() => root.unmount());
  });
});

describe("an install link", () => {
  it("is filled in and previewed with its exact command, and added only on the user's click", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "import_sources") return { claudeDesktop: null };
      if (cmd === "preview_import" || cmd === "apply_import") return report;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    const text = '{\n  "command": "npx",\n  "args": ["-y", "github-server"]\n}';
    const link = { link: { name: "github", text, form: "Cursor" }, problem: null };
    await act(async () => root.render(createElement(ImportServers, { link })));
    await settle();
    expect(host.querySelector("[data-testid=install-link-note]")?.textContent).toContain("a Cursor install link");
    expect((host.querySelector("#import-text") as HTMLTextAreaElement).value).toBe(text);
    expect(calls.filter((c) => c.cmd === "preview_import").map((c) => c.args)).toEqual([
      { source: { kind: "text", text, name: "github" } },
    ]);
    expect(host.querySelector("[data-testid=import-report]")?.textContent).toContain("npx -y github-server");
    expect(calls.some((c) => c.cmd === "apply_import")).toBe(false);
    await act(async () => (host.querySelector("[data-testid=import-confirm]") as HTMLButtonElement).click());
    await settle();
    expect(calls.filter((c) => c.cmd === "apply_import")).toHaveLength(1);
    await act(async () => root.unmount());
  });

  it("that cannot be read says why and fills nothing", async () => {
    mockIPC((cmd) => (cmd === "import_sources" ? { claudeDesktop: null } : null));
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    const link = { link: null, problem: "its config is not base64" };
    await act(async () => root.render(createElement(ImportServers, { link })));
    await settle();
    expect(host.querySelector("[data-testid=install-link-problem]")?.textContent).toContain("not base64");
    expect((host.querySelector("#import-text") as HTMLTextAreaElement).value).toBe("");
    await act(async () => root.unmount());
  });
});
