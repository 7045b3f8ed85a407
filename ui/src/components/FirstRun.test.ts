// The first run and the chat around it, in jsdom against Tauri's IPC mock: a local model server
// the backend found is offered and chosen (the provider saved as Ollama's OpenAI-compatible
// endpoint), another app's servers are copied after a preview, the chat then offers only the
// servers left on, and an unsent draft is kept.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ChatPanel from "./ChatPanel";
import Diagnostics from "./Diagnostics";
import type { ImportReport, ProviderView, ServerSnapshot } from "../ipc";
import { loadUiState, REMEMBER_DELAY_MS, resetUiState } from "../uiState";
import { click, mount, press, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  resetUiState();
  document.body.innerHTML = "";
});

const noKey: ProviderView = {
  kind: "anthropic",
  baseUrl: "https://api.anthropic.com",
  model: "claude-sonnet-4-5",
  keySet: false,
  keySource: null,
  keyHint: null,
  keyEnvVar: "ANTHROPIC_API_KEY",
  keyError: null,
  keyNeeded: true,
};

const server = (id: string): ServerSnapshot => ({
  id,
  name: id.toUpperCase(),
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

const report: ImportReport = {
  format: "mcpServers",
  added: [{ id: "memory", name: "memory", transport: "stdio", enabled: true, runs: "npx -y @modelcontextprotocol/server-memory" }],
  renamed: [],
  skipped: [],
  rules: [],
  inputs: [],
  secretCandidates: [],
  warnings: [],
};

describe("the first run", () => {
  it("offers the local model server the backend found, and other apps' servers", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      switch (cmd) {
        case "detect_local_models":
          return [{ preset: "ollama", name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: ["llama3.2", "qwen3"] }];
        case "list_hosts":
          return [
            { id: "cursor", label: "Cursor", path: "/home/me/.cursor/mcp.json", found: true, backup: null },
            { id: "zed", label: "Zed", path: null, found: false, backup: null },
          ];
        case "preview_import":
        case "apply_import":
          return report;
        case "set_provider":
          return { ...noKey, kind: "openai", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3", keyNeeded: false };
        case "list_conversations":
          return [];
      }
    });
    let chosen: ProviderView | null = null;
    const app = await mount(
      createElement(ChatPanel, {
        provider: noKey,
        servers: [],
        onOpenProvider: () => undefined,
        onProvider: (v: ProviderView) => (chosen = v),
      }),
    );
    const card = document.querySelector("[data-testid=first-run]") as HTMLElement;
    expect(card.textContent).toContain("Ollama");
    expect(card.textContent).toContain("add a provider");
    // Only the apps whose config is there are offered.
    expect(card.querySelector("[data-testid=first-run-host-cursor]")).not.toBeNull();
    expect(card.querySelector("[data-testid=first-run-host-zed]")).toBeNull();

    const select = document.getElementById("local-model-ollama") as HTMLSelectElement;
    await act(async () => {
      select.value = "qwen3";
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await click(card.querySelector("[data-testid=use-local-ollama]"));
    await settle();
    expect(calls.find((c) => c.cmd === "set_provider")?.args).toEqual({
      provider: { kind: "openai", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3" },
    });
    expect(chosen).toMatchObject({ model: "qwen3", keyNeeded: false });

    // Cursor's servers: previewed with what each runs, then added; Cursor's file is only read.
    await click(card.querySelector("[data-testid=first-run-preview-cursor]"));
    await settle();
    expect(card.textContent).toContain("npx -y @modelcontextprotocol/server-memory");
    await click(card.querySelector("[data-testid=first-run-import-cursor]"));
    await settle();
    const source = { kind: "host", host: "cursor" };
    expect(calls.filter((c) => c.cmd === "preview_import").map((c) => c.args)).toEqual([{ source }]);
    expect(calls.find((c) => c.cmd === "apply_import")?.args).toEqual({
      source,
      choices: { inputs: {}, moveSecrets: [] },
    });
    expect(card.textContent).toContain("Added memory; Cursor is unchanged.");
    app.unmount();
  });

  it("says when nothing answered, and looks again when asked", async () => {
    let asked = 0;
    mockIPC((cmd) => {
      if (cmd === "detect_local_models") {
        asked++;
        return [];
      }
      if (cmd === "list_hosts" || cmd === "list_conversations") return [];
    });
    const app = await mount(
      createElement(ChatPanel, { provider: noKey, servers: [], onOpenProvider: () => undefined }),
    );
    expect(document.querySelector("[data-testid=local-none]")?.textContent).toContain("No local model server answered");
    await click(document.querySelector("[data-testid=local-again]"));
    await settle();
    expect(asked).toBe(2);
    app.unmount();
  });
});

describe("the chat's own choices", () => {
  it("sends only the servers left on, and keeps the unsent draft", async () => {
    const sent: unknown[] = [];
    const remembered: { key: string; value: unknown }[] = [];
    mockIPC((cmd, args) => {
      switch (cmd) {
        case "ui_state":
          return { drafts: { new: "half a thought" } };
        case "set_ui_state":
          remembered.push(args as { key: string; value: unknown });
          return;
        case "list_conversations":
          return [];
        case "send_message":
          sent.push({ ...(args as object), onEvent: undefined });
          return "done";
        case "current_conversation":
          return "conv-1";
      }
    });
    await loadUiState();
    const app = await mount(
      createElement(ChatPanel, {
        provider: { ...noKey, keySet: true },
        servers: [server("files"), server("web")],
        onOpenProvider: () => undefined,
      }),
    );
    const input = document.getElementById("chat-input") as HTMLTextAreaElement;
    expect(input.value).toBe("half a thought");
    expect(document.querySelector("[data-testid=chat-servers] summary")?.textContent).toBe("Servers: 2 of 2 on");
    await click(document.querySelector("[data-testid=chat-server-web]"));
    expect(document.querySelector("[data-testid=chat-servers] summary")?.textContent).toBe("Servers: 1 of 2 on");

    await type(input, "list my files");
    await press(input, "Enter");
    await settle();
    expect(sent).toEqual([{ text: "list my files", serversOff: ["web"], attachments: [], onEvent: undefined }]);
    await settle(REMEMBER_DELAY_MS + 50);
    // The draft is gone once sent; the chat, now stored, keeps its servers under its id.
    const last = (key: string) => remembered.filter((r) => r.key === key).at(-1)?.value;
    expect(last("drafts")).toEqual({});
    expect(last("chatServers")).toEqual({ "conv-1": ["web"] });
    app.unmount();
  });
});

describe("diagnostics", () => {
  it("run as they open, with versions, folders and a button for the log folder", async () => {
    const asked: string[] = [];
    mockIPC((cmd) => {
      asked.push(cmd);
      if (cmd === "diagnostics")
        return {
          version: "0.1.0",
          settingsFile: "/d/settings.json",
          dataDir: "/d",
          logDir: "/d/logs",
          checks: [
            { name: "node", ok: true, detail: "/usr/bin/node" },
            { name: "keychain", ok: false, detail: "locked", fix: "Unlock it" },
          ],
          versions: [
            { name: "Toolgate", version: "0.1.0" },
            { name: "Web view", version: "2.50.6" },
          ],
        };
      if (cmd === "open_log_folder") return "/d/logs";
      if (cmd === "managed_policy")
        return {
          active: true,
          origins: [{ place: "/etc/toolgate/managed.json", modifiedMs: null }],
          warnings: ["the managed policy /etc/toolgate/managed.d/9.json was not applied: mode 666"],
          locks: {},
          requiredServers: [],
          allowUserServers: true,
          registryOnly: false,
          rules: [],
          telemetryEndpoint: "https://otel.example.com:4318",
          identityProviderLocked: false,
          readAtMs: null,
        };
    });
    const doctor = () => asked.filter((c) => c !== "managed_policy");
    const app = await mount(createElement(Diagnostics));
    expect(doctor()).toEqual(["diagnostics"]);
    // Where the organisation's policy came from, and what was refused.
    const managed = document.querySelector("[data-testid=managed-summary]")?.textContent ?? "";
    expect(managed).toContain("/etc/toolgate/managed.json");
    expect(managed).toContain("9.json was not applied");
    expect(managed).toContain("organisation's collector at https://otel.example.com:4318");
    expect(document.querySelector("[data-testid=doctor-summary]")?.textContent).toBe("1 check needs attention.");
    expect(document.querySelector("[data-testid=check-keychain]")?.textContent).toContain("How to fix: Unlock it");
    expect(document.querySelector("[data-testid=versions]")?.textContent).toContain("Web view2.50.6");
    await click(document.querySelector("[data-testid=open-log-folder]"));
    await settle();
    expect(doctor()).toEqual(["diagnostics", "open_log_folder"]);
    expect(document.body.textContent).toContain("Opened /d/logs.");
    app.unmount();
  });
});
