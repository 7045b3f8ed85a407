// The whole window, rendered by React in jsdom against Tauri's IPC mock, with something in every
// part (a start-up notice, a server's question, a chat turn with calls waiting and a result, the
// conversation list, a rename, servers and a tool's form, the add-server dialog with an import
// preview, secrets, rules and the rule editor, the audit log, the provider form, every settings
// section, the command palette): every control has an accessible name, ids are unique, and the
// sidebar works from the keyboard.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import { computeAccessibleName } from "dom-accessibility-api";
import App, { SCREENS } from "./App";
import type {
  AuditRow,
  ImportReport,
  PendingCall,
  PolicySettings,
  ProviderView,
  ServerSnapshot,
  ToolCatalogView,
  ToolInfo,
  TurnEvent,
  UiState,
} from "./ipc";
import { REMEMBER_DELAY_MS, resetUiState } from "./uiState";
import { ICON_SIZE } from "./icons";
import { click, mount, press, settle, type } from "./testing";

afterEach(() => {
  clearMocks();
  resetUiState();
  document.body.innerHTML = "";
});

const tool = (name: string): ToolInfo => ({
  name,
  title: null,
  description: `The ${name} tool.`,
  inputSchema: { type: "object", properties: { message: { type: "string" } } },
  outputSchema: null,
  readOnly: name === "echo",
  destructive: name === "delete",
  idempotent: false,
  openWorld: false,
});

const servers: ServerSnapshot[] = [
  {
    id: "everything",
    name: "Everything",
    enabled: true,
    status: { state: "ready" },
    implementation: null,
    protocolVersion: null,
    tools: ["echo", "delete", ...Array.from({ length: 12 }, (_, i) => `extra_${i}`)].map(tool),
    resources: [{ uri: "demo://readme", name: "Readme", description: "How it works", mimeType: "text/plain" }],
    prompts: [
      {
        name: "simple",
        description: "A prompt",
        arguments: ["topic"],
        argumentInfo: [{ name: "topic", description: null, required: false }],
      },
    ],
  roots: [],
  signedIn: null,
  needsScope: null,
  refusedTools: [],
  resourceTemplates: [],
  sandbox: null,
  readsUntrusted: false,
  sendsOut: false,
  reviewResults: [],
  },
  {
    id: "broken",
    name: "Broken",
    enabled: true,
    status: { state: "failed", reason: "exited with code 1" },
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
  },
];

const catalog: ToolCatalogView = {
  tools: servers[0].tools.map((t) => ({
    serverId: "everything",
    serverName: "Everything",
    tool: { name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: {} },
    state: { state: "visible", modelName: t.name },
  })),
  budget: { tools: 14, limit: 100, estimatedTokens: 900 },
  problem: null,
};

const provider: ProviderView = {
  kind: "anthropic",
  baseUrl: "https://api.anthropic.com",
  model: "claude",
  keySet: false,
  keySource: null,
  keyHint: null,
  keyEnvVar: "ANTHROPIC_API_KEY",
  keyError: null,
  keyNeeded: true,
};

const call = (id: string, tool: string): PendingCall => ({
  id,
  request: "toolCall",
  callId: `call-${id}`,
  serverId: "everything",
  serverName: "Everything",
  tool,
  arguments: { message: id },
  readOnly: false,
  destructive: false,
  inputSchema: {},
  reason: "No rule allows it",
  beyondRules: false,
});

const question: PendingCall = {
  ...call("q", "elicitation/create"),
  request: "elicitation",
  message: "What is your name?",
  arguments: {},
  inputSchema: { type: "object", properties: { name: { type: "string", title: "Name" } }, required: ["name"] },
};

const report: ImportReport = {
  format: "mcpServers",
  added: [{ id: "github", name: "github", transport: "stdio", enabled: true, runs: "npx -y github-server" }],
  renamed: [],
  skipped: [],
  rules: [],
  inputs: [
    { id: "token", description: "GitHub token", password: true, secretName: "GITHUB_TOKEN", default: null, usedBy: ["github"] },
    { id: "org", description: "", password: false, secretName: null, default: null, usedBy: ["github"] },
  ],
  secretCandidates: [{ serverId: "github", location: "env", name: "GITHUB_TOKEN", suggestedSecret: "GITHUB_TOKEN" }],
  warnings: [],
};

const policy: PolicySettings = {
  paused: false,
  autoAllowReadOnly: false,
  default: "ask",
  approvalTimeoutSecs: 600,
  rules: [
    {
      id: "r1",
      effect: "allow",
      scope: { kind: "always" },
      target: { kind: "tool", serverId: "everything", tool: "echo" },
      createdAt: 0,
    },
  ],
};

const audit: AuditRow[] = [
  {
    id: 1,
    decidedAt: 0,
    conversationId: null,
    serverId: "everything",
    tool: "echo",
    arguments: { message: "hi" },
    originalArguments: null,
    client: null,
    decision: "allowed",
    decidedBy: "user",
    ruleId: null,
    reason: null,
    durationMs: 3,
    resultBytes: 2,
    isError: false,
    error: null,
  },
];

function backend(state: UiState = {}) {
  let channel: Channel<TurnEvent> | null = null;
  const remembered: { key: string; value: unknown }[] = [];
  mockIPC(
    (cmd, args) => {
      switch (cmd) {
        case "ui_state":
          return state;
        case "set_ui_state":
          remembered.push(args as { key: string; value: unknown });
          return;
        case "list_servers":
          return servers;
        case "tool_catalog":
          return catalog;
        case "get_provider":
          return provider;
        case "startup_notices":
          return ["Your settings file could not be read; it was kept as settings.json.bad."];
        case "pending_approvals":
          return [question];
        case "list_conversations":
          return [
            { id: "c1", title: "Weather", createdAt: 0, updatedAt: 0, messageCount: 2, inputTokens: 0, outputTokens: 0 },
            { id: "c2", title: "Photos", createdAt: 0, updatedAt: 0, messageCount: 2, inputTokens: 0, outputTokens: 0 },
          ];
        case "current_conversation":
          return null;
        case "list_secrets":
          return [{ name: "API_TOKEN", usedBy: ["everything"], set: true, hint: "…abcd" }];
        case "import_sources":
          return { claudeDesktop: "/home/me/.config/Claude/claude_desktop_config.json" };
        case "list_hosts":
          return [
            { id: "cursor", label: "Cursor", path: "/home/me/.cursor/mcp.json", found: true, backup: null },
            { id: "zed", label: "Zed", path: "/home/me/.config/zed/settings.json", found: false, backup: null },
          ];
        case "door_status":
          return {
            enabled: true,
            address: "127.0.0.1:8787",
            url: "http://127.0.0.1:8787/mcp",
            listening: true,
            problem: null,
            clients: ["ci-runner"],
          };
        case "preview_import":
          return report;
        case "approval_rules":
          return policy;
        case "audit_log":
          return audit;
        case "provider_presets":
          return [{ id: "ollama", name: "Ollama", kind: "openai", baseUrl: "http://localhost:11434/v1", needsKey: false }];
        case "server_log":
          return ["Starting default (STDIO) server..."];
        case "start_at_login":
          return false;
        case "diagnostics":
          return {
            version: "0.1.0",
            settingsFile: "/home/me/.local/share/dev.toolgate.desktop/settings.json",
            dataDir: "/home/me/.local/share/dev.toolgate.desktop",
            logDir: "/home/me/.local/share/dev.toolgate.desktop/logs",
            checks: [
              { name: "node", ok: true, detail: "/usr/bin/node (v20)" },
              { name: "uvx", ok: false, detail: "not found", fix: "Install uv" },
            ],
          };
        case "tool_settings":
          return { naming: "auto", servers: { everything: { prefix: "ev" } } };
        case "set_tool_settings":
          return (args as { tools: unknown }).tools;
        case "read_resource":
          return { contents: [{ uri: "demo://readme", mimeType: "text/plain", text: "Read me." }] };
        case "send_message":
          channel = (args as { onEvent: Channel<TurnEvent> }).onEvent;
          return new Promise(() => undefined);
        case "preview_rule":
          return { checked: 1, matched: audit };
        case "detect_local_models":
          return [{ preset: "ollama", name: "Ollama", baseUrl: "http://127.0.0.1:11434/v1", models: ["llama3.2"] }];
      }
    },
    { shouldMockEvents: true },
  );
  return { emit: (event: TurnEvent) => act(async () => channel?.onmessage(event)), remembered };
}

const TABS = ["chat", "servers", "activity", "provider", "settings"];
const SECTIONS = ["general", "tools", "secrets", "import", "diagnostics"];

/** The controls a person can reach in the part of the window that is shown. */
function visibleControls(): HTMLElement[] {
  const selector = "input, textarea, select, button, summary, [role=tab], [tabindex]";
  return [...document.querySelectorAll<HTMLElement>(selector)].filter((el) => !el.closest("[hidden]"));
}

describe("the window", () => {
  it("names every control, on every tab", async () => {
    const { emit } = backend();
    const app = await mount(createElement(App));
    const { host } = app;

    // A conversation being renamed (before the turn: a turn disables the list).
    await click(host.querySelector("[aria-label='Rename “Weather”']"));
    expect(host.querySelector("input[aria-label='New title']")).not.toBeNull();

    // A chat turn: two calls wait (with the answer-all row), a third has run and shows its result.
    await type(host.querySelector("#chat-input") as HTMLTextAreaElement, "Do three things");
    await press(host.querySelector("#chat-input"), "Enter");
    await settle();
    await emit({ kind: "textDelta", text: "Working on **it**." });
    await emit({ kind: "approvalRequested", ...call("a1", "echo") });
    await emit({ kind: "approvalRequested", ...call("a2", "delete") });
    await emit({ kind: "decidedByRule", allowed: true, ...call("a3", "echo") });
    await emit({
      kind: "toolFinished",
      callId: "call-a3",
      isError: false,
      output: "Echo: a3",
      images: [{ mimeType: "image/png", data: "iVBORw0KGgo=" }],
    });
    await settle();
    const image = host.querySelector("[data-testid=result-images] img") as HTMLImageElement;
    expect(image.getAttribute("alt")).toBe("Image from echo");
    expect(image.getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(host.querySelector("[data-testid=answer-all]")).not.toBeNull();
    expect(host.querySelector("[data-testid=tool-output]")?.textContent).toBe("Echo: a3");
    // Each call's card is a named group, so its buttons are told apart from another card's.
    const cards = [...host.querySelectorAll("[data-testid=approval-card]")].map((card) => computeAccessibleName(card));
    expect(cards).toEqual(["Everything asks you", "echo on Everything", "delete on Everything", "echo on Everything"]);

    // Servers: the first server's card, a tool's form, and a resource read.
    await click(host.querySelector("[data-testid=tab-servers]"));
    await click(host.querySelector("[data-testid=tool-echo]"));
    await click(host.querySelector("[aria-label='Read Readme']"));
    await settle();
    expect(host.querySelector("[data-testid=resource-text]")?.textContent).toBe("Read me.");
    // The server's log, open.
    await click(host.querySelector("[data-testid=show-log]"));
    await settle();
    expect(host.querySelector("[data-testid=server-log]")?.textContent).toContain("Starting default");

    // Activity: a rule opened in the editor, with its preview.
    await click(host.querySelector("[data-testid=tab-activity]"));
    await settle();
    await click(host.querySelector("[data-testid=edit-rule-r1]"));
    await settle(400);
    expect(host.querySelector("[data-testid=rule-preview]")?.textContent).toContain("1 of the last 1 request");

    // The add-server dialog, left open: an import preview with inputs and secrets to move.
    await click(host.querySelector("[data-testid=tab-servers]"));
    await click(host.querySelector("[data-testid=add-server-button]"));
    await click(host.querySelector("[data-testid=add-tab-json]"));
    await type(host.querySelector("#import-text") as HTMLTextAreaElement, '{"mcpServers": {}}');
    await click(host.querySelector("[data-testid=import-preview]"));
    await settle();
    expect(host.querySelector("[data-testid=move-GITHUB_TOKEN]")).not.toBeNull();
    expect(host.querySelector("[data-testid=runs-github]")?.textContent).toBe("npx -y github-server");

    const audited: string[] = [];
    const audit = (where: string) => {
      for (const control of visibleControls()) {
        const name = computeAccessibleName(control).trim();
        const what = `${control.outerHTML.slice(0, 120)} (on ${where})`;
        expect(name, what).not.toBe("");
        audited.push(`${control.tagName.toLowerCase()}: ${name}`);
      }
      const ids = [...document.querySelectorAll("[id]")].map((el) => el.id);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i), "duplicate ids").toEqual([]);
    };
    audit("the add-server dialog");
    await click(host.querySelector("[data-testid=add-tab-wellKnown]"));
    audit("the well-known servers");
    await click(host.querySelector("[data-testid=add-server-close]"));
    for (const tab of TABS) {
      await click(host.querySelector(`[data-testid=tab-${tab}]`));
      await settle();
      audit(`the ${tab} screen`);
      if (tab !== "settings") continue;
      for (const section of SECTIONS) {
        await click(host.querySelector(`[data-testid=settings-${section}]`));
        await settle();
        audit(`the ${section} settings`);
      }
    }
    // The doctor ran as its section opened.
    expect(host.querySelector("[data-testid=check-uvx]")?.textContent).toContain("How to fix: Install uv");
    // The command palette, over everything.
    await press(document.body, "k", { ctrlKey: true });
    expect(document.querySelector("[data-testid=command-palette]")).not.toBeNull();
    audit("the command palette");
    // Every kind of control was there to be audited.
    for (const expected of [
      "textarea: Message",
      "input: Search conversations",
      "input: New title",
      "input: Reason for denying (optional)",
      "textarea: Your answer (JSON)",
      "summary: Result (1 line, 8 characters)",
      "button: Approve",
      "button: Restart Everything",
      "button: Save API_TOKEN",
      "button: Revoke: Allow echo on Everything (always)",
      "input: Filter tools",
      "textarea: Arguments for echo (JSON)",
      "input: message",
      "input: Name (required)",
      "summary: Resources (1)",
      "button: Read Readme",
      "button: Hide Readme",
      "summary: Prompts (1)",
      "input: Prefix of Everything",
      "textarea: Only offer tools of Everything matching",
      "textarea: Hide tools of Everything matching",
      "button: Save tool settings",
      "input: GitHub token",
      "input: org",
      "input: Seconds to wait for an answer",
      "select: Decision",
      "select: API format",
      "select: Start from a preset",
      "input: Offer echo to the model",
      "input: Enabled",
      "button: Remove Everything",
      "button: Check again",
      "input: New key",
      "button: Edit: Allow echo on Everything (always)",
      "select: Do",
      "input: Only for calls from",
      "button: Use Memory",
      "input: Or open a file (it is shown above before anything is added)",
      "button: Open the log folder",
      "input: Type a command",
      "div: Resize the sidebar",
    ]) {
      expect(audited).toContain(expected);
    }
    expect(audited.some((a) => a.startsWith("input: env GITHUB_TOKEN of github"))).toBe(true);
    expect(audited.some((a) => a.startsWith("input: Pause all tools"))).toBe(true);
    expect(audited.some((a) => a.startsWith("input: Always prefixed"))).toBe(true);

    expect(audited.some((a) => a.startsWith("input: API_TOKEN"))).toBe(true);
    app.unmount();
  }, 60_000);

  it("shows a call the server runs as a task with its status, and Stop is there to cancel it", async () => {
    const { emit } = backend();
    const app = await mount(createElement(App));
    const { host } = app;
    await type(host.querySelector("#chat-input") as HTMLTextAreaElement, "Make the report");
    await press(host.querySelector("#chat-input"), "Enter");
    await settle();
    await emit({ kind: "decidedByRule", allowed: true, ...call("t1", "slow_report") });
    await emit({ kind: "toolStarted", callId: "call-t1" });
    await emit({
      kind: "toolProgress",
      callId: "call-t1",
      progress: 2,
      total: null,
      message: "step 2 of 5",
      task: { id: "task-1", status: "working" },
    });
    await settle();
    expect(host.querySelector("[data-testid=tool-progress]")?.textContent).toBe(
      "running as a task on the server: working (step 2 of 5)",
    );
    await emit({
      kind: "toolProgress",
      callId: "call-t1",
      progress: 3,
      total: null,
      message: null,
      task: { id: "task-1", status: "input_required" },
    });
    await settle();
    expect(host.querySelector("[data-testid=tool-progress]")?.textContent).toBe(
      "running as a task on the server: input required",
    );
    const stop = host.querySelector("#chat-stop") as HTMLElement;
    expect(stop.querySelector("svg")?.getAttribute("aria-hidden")).toBe("true");
    expect(computeAccessibleName(stop)).toBe("Stop");
    app.unmount();
  });

  it("moves between screens in the sidebar with the arrow keys, Home and End", async () => {
    backend();
    const app = await mount(createElement(App));
    const tab = (id: string) => document.getElementById(`tab-${id}`) as HTMLButtonElement;
    const selected = () => TABS.filter((id) => tab(id).getAttribute("aria-selected") === "true");

    expect(document.querySelector("[role=tablist][aria-label=Sections]")?.getAttribute("aria-orientation")).toBe(
      "vertical",
    );
    for (const id of TABS) {
      const panel = document.getElementById(tab(id).getAttribute("aria-controls") ?? "");
      expect(panel?.getAttribute("role")).toBe("tabpanel");
      expect(panel?.getAttribute("aria-labelledby")).toBe(`tab-${id}`);
    }
    // One tab stop: the selected screen.
    expect(TABS.map((id) => tab(id).tabIndex)).toEqual([0, -1, -1, -1, -1]);

    act(() => tab("chat").focus());
    await press(tab("chat"), "ArrowDown");
    expect(selected()).toEqual(["servers"]);
    expect(document.activeElement).toBe(tab("servers"));
    expect(document.getElementById("panel-servers")?.hidden).toBe(false);
    expect(document.getElementById("panel-chat")?.hidden).toBe(true);
    expect(TABS.map((id) => tab(id).tabIndex)).toEqual([-1, 0, -1, -1, -1]);

    await press(tab("servers"), "End");
    expect(selected()).toEqual(["settings"]);
    expect(document.activeElement).toBe(tab("settings"));
    await press(tab("settings"), "ArrowDown");
    expect(selected()).toEqual(["chat"]);
    await press(tab("chat"), "ArrowUp");
    expect(selected()).toEqual(["settings"]);
    await press(tab("settings"), "Home");
    expect(selected()).toEqual(["chat"]);
    expect(document.activeElement).toBe(tab("chat"));
    app.unmount();
  });

  it("counts what waits and what failed in the sidebar, and opens screens with Ctrl+number", async () => {
    backend();
    const app = await mount(createElement(App));
    const tab = (id: string) => document.getElementById(`tab-${id}`) as HTMLButtonElement;
    // One question waits; one server failed.
    expect(computeAccessibleName(tab("activity"))).toBe("Activity (1 waiting)");
    expect(computeAccessibleName(tab("servers"))).toBe("Servers (1 failed)");
    expect(computeAccessibleName(tab("chat"))).toBe("Chat");
    // Each section has its icon before its word, hidden from screen readers (the names above
    // are unchanged by it), and one icon per section.
    const icons = SCREENS.map((s) => tab(s.id).querySelector(".nav-label > svg"));
    for (const icon of icons) expect(icon?.getAttribute("aria-hidden")).toBe("true");
    expect(new Set(icons.map((i) => i?.getAttribute("class"))).size).toBe(SCREENS.length);

    // From inside a text field too.
    const input = document.getElementById("chat-input") as HTMLTextAreaElement;
    await press(input, "3", { ctrlKey: true });
    expect(tab("activity").getAttribute("aria-selected")).toBe("true");
    await press(document.body, "2", { ctrlKey: true });
    expect(tab("servers").getAttribute("aria-selected")).toBe("true");
    // The failed server's last error, in one line, in the list.
    expect(document.querySelector("[data-testid=server-row-broken] [data-testid=server-row-error]")?.textContent).toBe(
      "exited with code 1",
    );
    app.unmount();
  });

  it("puts each screen's icon on its heading, and each settings section's on its own, hidden from screen readers", async () => {
    backend();
    const app = await mount(createElement(App));
    const { host } = app;
    const sameIcon = (heading: HTMLElement | null | undefined, entry: HTMLElement | null, text: string) => {
      const icon = heading?.querySelector(":scope > svg");
      expect(heading?.textContent, text).toBe(text);
      // The icon its tab has, at the one size, hidden: the heading's name is its words alone.
      expect(icon?.getAttribute("class"), text).toBe(entry?.querySelector("svg")?.getAttribute("class"));
      expect(icon?.getAttribute("aria-hidden"), text).toBe("true");
      expect(icon?.getAttribute("width"), text).toBe(String(ICON_SIZE));
      expect(computeAccessibleName(heading as HTMLElement), text).toBe(text);
    };
    // The chat has no heading (its header bar is the model and its servers); the other screens do.
    const headings: Record<string, string> = { servers: "Servers", activity: "Activity", provider: "Model provider" };
    for (const [id, text] of Object.entries(headings)) {
      const tab = document.getElementById(`tab-${id}`) as HTMLElement;
      await click(tab);
      await settle();
      sameIcon(document.getElementById(`panel-${id}`)?.querySelector("h2"), tab, text);
    }
    // Settings shows one section at a time; each section's heading has the icon of its entry.
    await click(document.getElementById("tab-settings"));
    const sections: Record<string, string> = {
      general: "General",
      tools: "Tool names",
      secrets: "Secrets",
      import: "Import and export",
      diagnostics: "Diagnostics",
    };
    const shown = new Set<string | null | undefined>();
    for (const [id, text] of Object.entries(sections)) {
      const entry = document.getElementById(`settings-tab-${id}`) as HTMLElement;
      await click(entry);
      await settle();
      const heading = document.getElementById("settings-section")?.querySelector("h2");
      sameIcon(heading, entry, text);
      expect(computeAccessibleName(entry)).toBe(text);
      shown.add(heading?.querySelector("svg")?.getAttribute("class"));
      // One heading of that name: no section repeats its own name under it.
      const names = [...document.querySelectorAll("#settings-section h2, #settings-section h3")].map((h) => h.textContent);
      expect(names.filter((n) => n === text), text).toHaveLength(1);
    }
    expect(shown.size).toBe(Object.keys(sections).length);

    // Send and New chat have their actions' icons too, hidden, so their names stay their words.
    await click(document.getElementById("tab-chat"));
    const send = host.querySelector("#chat-send") as HTMLElement;
    const newChat = host.querySelector("[data-testid=sidebar-new-chat]") as HTMLElement;
    expect(send.querySelector("svg")?.getAttribute("class")).toContain("lucide-send-horizontal");
    expect(newChat.querySelector("svg")?.getAttribute("class")).toContain("lucide-plus");
    for (const button of [send, newChat]) expect(button.querySelector("svg")?.getAttribute("aria-hidden")).toBe("true");
    expect(computeAccessibleName(send)).toBe("Send");
    expect(computeAccessibleName(newChat)).toBe("New chat");
    app.unmount();
  });

  it("opens on the screen, settings section and sidebar width it was left with, and remembers changes", async () => {
    const { remembered } = backend({ screen: "settings", settingsSection: "secrets", panels: { sidebar: 300 } });
    const app = await mount(createElement(App));
    expect(document.getElementById("tab-settings")?.getAttribute("aria-selected")).toBe("true");
    expect(document.getElementById("settings-tab-secrets")?.getAttribute("aria-selected")).toBe("true");
    const splitter = document.querySelector("[data-testid=sidebar-splitter]") as HTMLElement;
    expect(splitter.getAttribute("aria-valuenow")).toBe("300");

    await click(document.getElementById("tab-activity"));
    await press(splitter, "ArrowLeft");
    await settle(REMEMBER_DELAY_MS + 50);
    expect(remembered).toEqual([
      { key: "screen", value: "activity" },
      { key: "panels", value: { sidebar: 284 } },
    ]);
    app.unmount();
  });
});
