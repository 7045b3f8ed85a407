// Activity, in jsdom against Tauri's IPC mock: every waiting request on top (answered from here),
// following the gate's changes; and the rule editor, whose preview and save go through the
// backend with the rule's exact JSON.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import { act } from "react";
import ActivityPanel, { askedBy } from "./ActivityPanel";
import { fieldProblem, PREVIEW_DELAY_MS } from "./RuleEditor";
import type { AuditRow, PendingCall, PolicySettings, Rule, ServerSnapshot } from "../ipc";
import { computeAccessibleName } from "dom-accessibility-api";
import { click, mount, settle, type, withStyles } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const servers: ServerSnapshot[] = [
  {
    id: "fs",
    name: "Files",
    enabled: true,
    status: { state: "ready" },
    implementation: null,
    protocolVersion: "2025-11-25",
    tools: [
      {
        name: "write_file",
        title: null,
        description: "Writes a file",
        inputSchema: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } },
        outputSchema: null,
        readOnly: false,
        destructive: true,
        idempotent: false,
        openWorld: false,
      },
    ],
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

const chatCall: PendingCall = {
  id: "p1",
  request: "toolCall",
  callId: "c1",
  serverId: "fs",
  serverName: "Files",
  tool: "write_file",
  arguments: { path: "/etc/hosts" },
  readOnly: false,
  destructive: true,
  inputSchema: {},
  reason: "No rule allows it",
  beyondRules: false,
};
// The gate says when it denies a call nobody answers, and what the tool does.
const clientCall: PendingCall = {
  ...chatCall,
  id: "p2",
  callId: "c2",
  client: "cursor",
  description: "Writes <b>one</b> file",
  deadline: Date.now() + 300_000,
};

const row = (id: number, path: string): AuditRow => ({
  id,
  decidedAt: 0,
  conversationId: "conv",
  serverId: "fs",
  tool: "write_file",
  arguments: { path },
  originalArguments: null,
  client: null,
  decision: "allowed",
  decidedBy: "user",
  ruleId: null,
  reason: null,
  durationMs: 1,
  resultBytes: 1,
  isError: false,
  error: null,
});

describe("activity", () => {
  it("says who asks", () => {
    expect(askedBy(chatCall)).toBe("from the chat");
    expect(askedBy(clientCall)).toBe("from cursor");
    expect(askedBy({ ...chatCall, request: "elicitation" })).toBe("from Files");
    expect(fieldProblem('rule 0 ("r-1"), conditions[0].pointer: is not a JSON pointer')).toBe(
      "conditions[0].pointer: is not a JSON pointer",
    );
  });

  it("shows every waiting request with its card, answers it, and follows the gate", async () => {
    let waiting = [chatCall, clientCall];
    const answers: unknown[] = [];
    mockIPC(
      (cmd, args) => {
        if (cmd === "pending_approvals") return waiting;
        if (cmd === "approval_rules") return { paused: false, autoAllowReadOnly: false, default: "ask", rules: [] };
        if (cmd === "audit_log") return [{ ...row(1, "/tmp/a"), decision: "denied", reason: "not <b>that</b> folder" }];
        if (cmd === "answer_approval") answers.push(args);
      },
      { shouldMockEvents: true },
    );
    const app = await mount(
      createElement(ActivityPanel, { visible: true, servers, paused: false, onPause: () => undefined }),
    );
    const cards = () => [...document.querySelectorAll("[data-testid=activity-waiting] [data-testid=approval-card]")];
    expect(cards().map((c) => c.getAttribute("aria-label"))).toEqual([
      "write_file on Files",
      "cursor wants to run write_file on Files",
    ]);
    // Each card counts down to the gate's own deadline, when it has one, and says what the
    // tool does, in its server's words as text.
    expect(cards()[0].querySelector("[data-testid=approval-deadline]")).toBeNull();
    expect(cards()[1].querySelector("[data-testid=approval-deadline]")?.textContent).toMatch(
      /^Denied in [45]:\d\d if not answered$/,
    );
    expect(cards()[0].querySelector("[data-testid=approval-description]")?.textContent).toBe("Writes a file");
    const description = cards()[1].querySelector("[data-testid=approval-description]");
    expect(description?.textContent).toBe("Writes <b>one</b> file");
    expect(description?.querySelector("b")).toBeNull();
    expect(document.querySelector("[data-testid=audit-log]")?.textContent).toContain("/tmp/a");
    // The log says why, in a column of its own, as text.
    const headings = [...document.querySelectorAll("[data-testid=audit-log] th")].map((th) => th.textContent);
    expect(headings).toContain("Reason");
    const reason = document.querySelector("[data-testid=audit-reason]");
    expect(reason?.textContent).toBe("not <b>that</b> folder");
    expect(reason?.querySelector("b")).toBeNull();
    // The approval options sit under a heading of their own, at the level of the screen's other
    // sections, and the heading names their region.
    const settings = document.querySelector("[data-testid=approval-settings]") as HTMLElement;
    expect(settings.querySelector("h3")?.textContent).toBe("When nothing decides");
    expect(computeAccessibleName(settings)).toBe("When nothing decides");
    // New rule has the icon every adding button has, hidden from screen readers.
    const newRule = document.querySelector("[data-testid=new-rule]") as HTMLElement;
    expect(newRule.querySelector("svg")?.getAttribute("class")).toContain("lucide-plus");
    expect(newRule.querySelector("svg")?.getAttribute("aria-hidden")).toBe("true");
    expect(computeAccessibleName(newRule)).toBe("New rule");
    expect([...document.querySelectorAll(".activity h3")].map((h) => h.textContent)).toEqual([
      "Waiting for you (2)",
      "Rules",
      "When nothing decides",
      "Log",
    ]);
    expect(settings.querySelector("[data-testid=auto-allow-read-only]")).not.toBeNull();
    await click(cards()[0].querySelector("[data-testid=approve]"));
    expect(answers).toEqual([{ id: "p1", decision: { decision: "approve" } }]);

    waiting = [clientCall];
    await act(() => emit("approvals-changed"));
    await settle();
    expect(cards()).toHaveLength(1);
    expect(document.querySelector("#waiting-heading")?.textContent).toBe("Waiting for you (1)");
    app.unmount();
  });

  it("gives each decision's reason a column of its own: text only, wrapped, empty when there is none", async () => {
    const long = `The user said: ${"no-spaces-at-all-".repeat(20)}\nand <img src=x onerror="alert(1)"> on a second line`;
    mockIPC(
      (cmd) => {
        if (cmd === "pending_approvals") return [];
        if (cmd === "approval_rules") return { paused: false, autoAllowReadOnly: false, default: "ask", rules: [] };
        if (cmd === "audit_log")
          return [
            { ...row(2, "/etc/hosts"), decision: "denied", reason: long },
            { ...row(1, "/tmp/a"), reason: null },
          ];
      },
      { shouldMockEvents: true },
    );
    const unstyle = withStyles();
    const app = await mount(
      createElement(ActivityPanel, { visible: true, servers, paused: false, onPause: () => undefined }),
    );
    const log = document.querySelector("[data-testid=audit-log]") as HTMLTableElement;
    const column = [...log.querySelectorAll("thead th")].findIndex((th) => th.textContent === "Reason");
    expect(column).toBeGreaterThan(-1);
    const cells = [...log.querySelectorAll("tbody tr")].map((tr) => tr.children[column] as HTMLElement);
    expect(cells.map((td) => td.dataset.testid)).toEqual(["audit-reason", "audit-reason"]);
    // The reason as written, never as markup; nothing at all for a decision without one.
    expect(cells[0].textContent).toBe(long);
    expect(cells[0].children).toHaveLength(0);
    expect(cells[1].textContent).toBe("");
    // Wrapped however long (no word breaks in most of it), its line breaks kept.
    const style = getComputedStyle(cells[0]);
    expect(style.getPropertyValue("overflow-wrap")).toBe("anywhere");
    expect(style.whiteSpace).toBe("pre-wrap");
    app.unmount();
    unstyle();
  });

  it("previews a rule through the backend as it is edited, and saves it", async () => {
    const existing: Rule = {
      id: "r1",
      effect: "allow",
      scope: { kind: "always" },
      target: { kind: "tool", serverId: "fs", tool: "write_file" },
      boundTo: { serverFingerprint: "s", toolFingerprint: "t" },
      createdAt: 5,
    };
    let policy: PolicySettings = { paused: false, autoAllowReadOnly: false, default: "ask", rules: [existing] };
    const previews: Rule[] = [];
    const saved: Rule[] = [];
    mockIPC(
      (cmd, args) => {
        switch (cmd) {
          case "pending_approvals":
            return [];
          case "approval_rules":
            return policy;
          case "audit_log":
            return [];
          case "preview_rule": {
            const rule = (args as { rule: Rule }).rule;
            previews.push(rule);
            const pointer = rule.conditions?.[0]?.pointer;
            if (pointer && !pointer.startsWith("/")) {
              throw { kind: "approval", message: `rule 0 ("r1"), conditions[0].pointer: is not a JSON pointer` };
            }
            return { checked: 3, matched: [row(3, "/etc/passwd"), row(1, "/etc/hosts")] };
          }
          case "save_rule": {
            const rule = (args as { rule: Rule }).rule;
            saved.push(rule);
            policy = { ...policy, rules: [rule] };
            return policy;
          }
        }
      },
      { shouldMockEvents: true },
    );
    const app = await mount(
      createElement(ActivityPanel, { visible: true, servers, paused: false, onPause: () => undefined }),
    );
    await click(document.querySelector("[data-testid=edit-rule-r1]"));
    const editor = document.querySelector("[data-testid=rule-editor]") as HTMLElement;
    expect(editor.getAttribute("aria-label")).toBe("Edit rule");

    // The server by its name, once.
    const server = editor.querySelector("[data-testid=rule-server]") as HTMLSelectElement;
    expect(server.selectedOptions[0]?.textContent).toBe("Files");
    await settle(PREVIEW_DELAY_MS + 50);
    expect(editor.querySelector("[data-testid=rule-preview]")).not.toBeNull();

    // Narrowed to paths under /etc: the preview asks the backend once typing pauses.
    await click(editor.querySelector("[data-testid=add-condition]"));
    // The tool's first argument is offered as the pointer.
    expect((editor.querySelector("[data-testid=rule-pointer-0]") as HTMLInputElement).value).toBe("/path");
    // A condition just added is not an error: it is not finished, and the preview stays.
    await settle(PREVIEW_DELAY_MS + 50);
    expect(editor.querySelector("[data-testid=rule-problem]")).toBeNull();
    expect(editor.querySelector("[data-testid=rule-unfinished]")?.textContent).toContain("Condition 1 is not finished");
    expect(editor.querySelector("[data-testid=rule-preview]")).not.toBeNull();
    await type(editor.querySelector("[data-testid=rule-value-0]") as HTMLInputElement, "/etc/**");
    await settle(PREVIEW_DELAY_MS + 50);
    expect(previews.at(-1)).toEqual({
      id: "r1",
      effect: "allow",
      scope: { kind: "always" },
      target: { kind: "tool", serverId: "fs", tool: "write_file" },
      conditions: [{ pointer: "/path", matcher: { kind: "glob", value: "/etc/**" } }],
      boundTo: { serverFingerprint: "s", toolFingerprint: "t" },
      createdAt: 5,
      expiresAt: null,
      note: null,
      client: null,
    });
    const preview = editor.querySelector("[data-testid=rule-preview]");
    expect(preview?.textContent).toContain("It would have matched 2 of the last 3 requests:");
    expect([...editor.querySelectorAll("[data-testid=rule-preview-row] code")].map((c) => c.textContent)).toEqual([
      '{"path":"/etc/passwd"}',
      '{"path":"/etc/hosts"}',
    ]);

    // A mistake is named in words, from the backend's field, and the preview stays beside it.
    await type(editor.querySelector("[data-testid=rule-pointer-0]") as HTMLInputElement, "path");
    await settle(PREVIEW_DELAY_MS + 50);
    expect(editor.querySelector("[data-testid=rule-problem]")?.textContent).toBe(
      "Condition 1: the argument is not a JSON pointer.",
    );
    expect(editor.querySelector("[data-testid=rule-preview]")).not.toBeNull();
    await type(editor.querySelector("[data-testid=rule-pointer-0]") as HTMLInputElement, "/path");

    // Made an Ask for one app only, and saved.
    const effect = editor.querySelector("[data-testid=rule-effect]") as HTMLSelectElement;
    await act(async () => {
      effect.value = "ask";
      effect.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await type(editor.querySelector("[data-testid=rule-client]") as HTMLInputElement, "cursor");
    await click(editor.querySelector("[data-testid=rule-save]"));
    await settle();
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({ id: "r1", effect: "ask", client: "cursor" });
    expect(document.querySelector("[data-testid=rule-editor]")).toBeNull();
    expect(document.querySelector("[data-testid=rule]")?.textContent).toBe(
      "Ask before write_file on Files (always, when path matches “/etc/**”, for cursor)",
    );
    app.unmount();
  });

  it("lists the organisation's rules apart and disables what it locks, saying so", async () => {
    const org: Rule = {
      id: "org:no-push",
      effect: "ask",
      scope: { kind: "always" },
      target: { kind: "server", serverId: "git" },
      createdAt: 0,
      note: "pushes are asked",
      managed: true,
    };
    mockIPC(
      (cmd) => {
        if (cmd === "pending_approvals") return [];
        if (cmd === "approval_rules") return { paused: false, autoAllowReadOnly: false, default: "ask", rules: [] };
        if (cmd === "audit_log") return [];
        if (cmd === "managed_policy")
          return { active: true, locks: { autoAllowReadOnly: false }, rules: [org], origins: [], warnings: [] };
      },
      { shouldMockEvents: true },
    );
    const app = await mount(
      createElement(ActivityPanel, { visible: true, servers, paused: false, onPause: () => undefined }),
    );
    await settle();
    const listed = [...document.querySelectorAll("[data-testid=managed-rule]")].map((r) => r.textContent);
    expect(listed).toEqual(["pushes are asked Ask before every tool of git (always)"]);
    expect(document.querySelector("[data-testid='managed-rule-note-org:no-push']")?.textContent).toBe(
      "Set by your organisation",
    );
    // Not among the user's own rules, which can be edited and revoked.
    expect(document.querySelector("[data-testid=rules]")?.textContent).not.toContain("pushes are asked");
    const readOnly = document.querySelector("[data-testid=auto-allow-read-only]") as HTMLInputElement;
    expect(readOnly.disabled).toBe(true);
    expect(document.querySelector("[data-testid=auto-allow-read-only-locked]")?.textContent).toBe(
      "Set by your organisation",
    );
    app.unmount();
  });
});
