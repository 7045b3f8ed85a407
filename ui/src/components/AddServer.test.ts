// The add-server form, in jsdom against Tauri's IPC mock: it builds a single-server entry, which
// the backend previews like a pasted snippet, and adds it moving the token to the keychain.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import AddServer, { parsePairs, splitCommand } from "./AddServer";
import type { ImportReport } from "../ipc";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(() => clearMocks());
const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));

function type(element: HTMLInputElement | HTMLTextAreaElement, value: string) {
  const proto = element instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, "value")?.set?.call(element, value);
  element.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("adding a server with the form", () => {
  it("splits the command line and the pairs", () => {
    expect(splitCommand(`npx -y "@scope/server" '/home/me/my notes'`)).toEqual([
      "npx",
      "-y",
      "@scope/server",
      "/home/me/my notes",
    ]);
    expect(parsePairs("A=1\n\nB = two=2", "variable")).toEqual({ A: "1", B: "two=2" });
    expect(parsePairs("Authorization: Bearer x", "header")).toEqual({ Authorization: "Bearer x" });
    expect(() => parsePairs("oops", "variable")).toThrow(/NAME=value/);
  });

  it("says which server an entry is the same as, rather than a bare reason", async () => {
    const report: ImportReport = {
      format: "singleServer",
      added: [],
      renamed: [],
      skipped: [{ name: "Notes again", reason: { kind: "identical", id: "notes", existing: true } }],
      rules: [],
      inputs: [],
      secretCandidates: [],
      warnings: [],
    };
    mockIPC(() => report);
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(AddServer)));
    await act(async () => type(host.querySelector("#add-command") as HTMLInputElement, "npx -y notes-server"));
    await act(async () => (host.querySelector("[data-testid=add-check]") as HTMLButtonElement).click());
    await settle();
    const said = host.querySelector("[data-testid=add-report]")?.textContent ?? "";
    expect(said).toContain("Not added: the same server is already added, as notes");
    expect(said).not.toMatch(/:\s*identical/);
    expect((host.querySelector("[data-testid=add-confirm]") as HTMLButtonElement).disabled).toBe(true);
    await act(async () => root.unmount());
    host.remove();
  });

  it("previews the entry like a pasted snippet and adds it with the token moved", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    const report: ImportReport = {
      format: "singleServer",
      added: [{ id: "notes", name: "Notes", transport: "stdio", enabled: true, runs: "npx -y notes-server" }],
      renamed: [],
      skipped: [],
      rules: [],
      inputs: [],
      secretCandidates: [{ serverId: "notes", location: "env", name: "API_TOKEN", suggestedSecret: "API_TOKEN" }],
      warnings: [],
    };
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      return report;
    });
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(AddServer)));
    await act(async () => type(host.querySelector("#add-name") as HTMLInputElement, "Notes"));
    await act(async () => type(host.querySelector("#add-command") as HTMLInputElement, "npx -y notes-server"));
    await act(async () => type(host.querySelector("#add-pairs") as HTMLTextAreaElement, "API_TOKEN=abc123"));
    await act(async () => (host.querySelector("[data-testid=add-check]") as HTMLButtonElement).click());
    await settle();
    const text = JSON.stringify({ command: "npx", args: ["-y", "notes-server"], env: { API_TOKEN: "abc123" } });
    expect(calls[0]).toEqual({ cmd: "preview_import", args: { source: { kind: "text", text, name: "Notes" } } });
    expect(host.querySelector("[data-testid=add-report]")?.textContent).toContain("Adds Notes as notes");
    await act(async () => (host.querySelector("[data-testid=add-confirm]") as HTMLButtonElement).click());
    await settle();
    expect(calls[1]).toEqual({
      cmd: "apply_import",
      args: {
        source: { kind: "text", text, name: "Notes" },
        choices: { inputs: {}, moveSecrets: [{ serverId: "notes", location: "env", name: "API_TOKEN" }] },
      },
    });
    expect(host.textContent).toContain("Added Notes.");
    act(() => root.unmount());
  });

  it("shows progress in place while the server starts, and a server that did not start as a failure", async () => {
    const report: ImportReport = {
      format: "singleServer",
      added: [{ id: "broken", name: "Broken", transport: "stdio", enabled: true, runs: "npx -y broken-server" }],
      renamed: [],
      skipped: [],
      rules: [],
      inputs: [],
      secretCandidates: [],
      warnings: [],
    };
    let finish: (r: ImportReport) => void = () => undefined;
    mockIPC((cmd) => {
      if (cmd === "preview_import") return report;
      if (cmd === "apply_import") return new Promise<ImportReport>((resolve) => (finish = resolve));
      if (cmd === "list_servers")
        return [{ id: "broken", name: "Broken", enabled: true, status: { state: "failed", reason: "exited with code 1" } }];
    });
    const added: string[][] = [];
    let done = false;
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () =>
      root.render(createElement(AddServer, { onAdded: (ids: string[]) => added.push(ids), onDone: () => (done = true) })),
    );
    // Placeholders describe what goes there; none looks like a value already filled in.
    for (const id of ["#add-name", "#add-command"]) {
      const placeholder = (host.querySelector(id) as HTMLInputElement).placeholder;
      expect(placeholder).not.toMatch(/^(Notes|npx |https?:)/);
    }
    await act(async () => type(host.querySelector("#add-command") as HTMLInputElement, "npx -y broken-server"));
    await act(async () => (host.querySelector("[data-testid=add-check]") as HTMLButtonElement).click());
    await settle();
    await act(async () => (host.querySelector("[data-testid=add-confirm]") as HTMLButtonElement).click());
    await settle();
    // While the install and first start run: a spinner and the step, and no second click.
    expect(host.querySelector("[data-testid=add-progress]")?.textContent).toContain("Adding Broken and starting it…");
    expect(host.querySelector("[data-testid=add-progress] .spinner")).not.toBeNull();
    expect((host.querySelector("[data-testid=add-confirm]") as HTMLButtonElement).disabled).toBe(true);

    await act(async () => finish(report));
    await settle();
    await settle();
    expect(host.querySelector("[data-testid=add-progress]")).toBeNull();
    const alert = host.querySelector("[role=alert]");
    expect(alert?.textContent).toContain("Broken was added but did not start: exited with code 1.");
    expect(host.textContent).not.toContain("Added Broken.");
    expect(added).toEqual([["broken"]]);
    expect(done).toBe(false);
    act(() => root.unmount());
  });
});
