// A turn in the chat, against Tauri's IPC mock. The chat follows the conversation: after a send,
// a Deny or an Always allow, the newest message is scrolled into view; a user who scrolled up to
// read is left where they are until they act. The approval card says who asks, what the tool
// does, the time left, and after the decision what happened.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import ChatPanel from "./ChatPanel";
import type { PendingCall, ProviderView, ServerSnapshot, TurnEvent } from "../ipc";
import { click, mount, press, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const provider: ProviderView = {
  kind: "anthropic",
  baseUrl: "https://api.anthropic.com",
  model: "m",
  keySet: true,
  keySource: "keychain",
  keyHint: "…abcd",
  keyEnvVar: "ANTHROPIC_API_KEY",
  keyError: null,
  keyNeeded: true,
};

const call = (id: string): PendingCall => ({
  id,
  request: "toolCall",
  callId: `c-${id}`,
  serverId: "everything",
  serverName: "Everything",
  tool: "echo",
  arguments: { message: "hi" },
  readOnly: false,
  destructive: false,
  inputSchema: {},
  reason: "no rule covers this",
  beyondRules: false,
});

/** Gives the jsdom list a layout: its content grows by 100 px with every item. */
function layout(list: HTMLElement) {
  let top = 0;
  Object.defineProperty(list, "clientHeight", { configurable: true, get: () => 200 });
  Object.defineProperty(list, "scrollHeight", { configurable: true, get: () => 100 * list.children.length + 200 });
  Object.defineProperty(list, "scrollTop", {
    configurable: true,
    get: () => top,
    set: (v: number) => (top = v),
  });
  const bottom = () => list.scrollHeight;
  const scrollUserTo = async (v: number) => {
    top = v;
    await act(async () => list.dispatchEvent(new Event("scroll")));
  };
  return { top: () => top, bottom, scrollUserTo };
}

async function chat(servers: ServerSnapshot[] = [], timeoutSecs: number | null = null) {
  let channel: Channel<TurnEvent> | null = null;
  const finishers: ((text: string) => void)[] = [];
  const failers: ((error: unknown) => void)[] = [];
  mockIPC((cmd, args) => {
    if (cmd === "list_conversations") return [];
    if (cmd === "current_conversation") return "c1";
    if (cmd === "answer_approval") return null;
    if (cmd === "approval_rules")
      return { paused: false, autoAllowReadOnly: false, default: "ask", approvalTimeoutSecs: timeoutSecs, rules: [] };
    if (cmd === "send_message") {
      channel = (args as { onEvent: Channel<TurnEvent> }).onEvent;
      return new Promise<string>((resolve, reject) => {
        finishers.push(resolve);
        failers.push(reject);
      });
    }
    // The backend ends the turn with its error, as the real one does.
    if (cmd === "stop_turn") failers.shift()?.({ kind: "stopped", message: "stopped" });
  });
  const app = await mount(createElement(ChatPanel, { provider, servers, onOpenProvider: () => undefined }));
  const list = app.host.querySelector("[data-testid=messages]") as HTMLElement;
  const box = layout(list);
  const emit = async (event: TurnEvent) => {
    await act(async () => channel?.onmessage(event));
    await settle();
  };
  const send = async (text: string) => {
    await type(app.host.querySelector("#chat-input") as HTMLTextAreaElement, text);
    await press(app.host.querySelector("#chat-input"), "Enter");
    await settle();
  };
  const finish = async () => {
    failers.shift();
    await act(async () => finishers.shift()?.("done"));
    await settle();
  };
  const fail = async (error: string) => {
    finishers.shift();
    await act(async () => failers.shift()?.(error));
    await settle();
  };
  return { app, box, emit, send, finish, fail };
}

describe("the chat follows the conversation", () => {
  it("scrolls the newest message into view after a send, and as the answer arrives", async () => {
    const { app, box, emit, send, finish } = await chat();
    await send("hello");
    expect(box.top()).toBe(box.bottom());
    await emit({ kind: "textDelta", text: "Hi" });
    await emit({ kind: "finished", text: "Hi there", usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, costMicroUsd: null });
    await finish();
    expect(box.top()).toBe(box.bottom());
    app.unmount();
  });

  it("leaves a user who scrolled up where they are, until they deny or always allow", async () => {
    const { app, box, emit, send } = await chat();
    await send("hello");
    await emit({ kind: "approvalRequested", ...call("a1") });
    await box.scrollUserTo(0);
    await emit({ kind: "approvalRequested", ...call("a2") });
    // Reading older messages: new ones do not pull the view down.
    expect(box.top()).toBe(0);

    const cards = app.host.querySelectorAll("[data-testid=approval-card]");
    await click(cards[0].querySelector("[data-testid=deny]"));
    await settle();
    expect(box.top()).toBe(box.bottom());

    await box.scrollUserTo(0);
    await click(cards[1].querySelector("[data-testid=always-allow]"));
    await settle();
    expect(box.top()).toBe(box.bottom());
    await emit({ kind: "textDelta", text: "The answer" });
    expect(box.top()).toBe(box.bottom());
    app.unmount();
  });

  it("follows again once the user scrolls back to the bottom", async () => {
    const { app, box, emit, send } = await chat();
    await send("hello");
    await box.scrollUserTo(0);
    await emit({ kind: "textDelta", text: "one" });
    expect(box.top()).toBe(0);
    await box.scrollUserTo(box.bottom() - 200);
    await emit({ kind: "toolsSearched", callId: "s1", query: "x", found: [] });
    expect(box.top()).toBe(box.bottom());
    app.unmount();
  });
});

const everything: ServerSnapshot = {
  id: "everything",
  name: "Everything",
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: null,
  tools: [
    {
      name: "echo",
      title: null,
      description: "Echoes back the input <b>as is</b>.",
      inputSchema: {},
      outputSchema: null,
      readOnly: false,
      destructive: false,
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
};

describe("the approval card in the chat", () => {
  const text = (card: Element, id: string) => card.querySelector(`[data-testid=${id}]`)?.textContent ?? null;

  it("names the chat and its model, shows the tool's description and the time left", async () => {
    const { app, emit, send } = await chat([everything], 120);
    await send("hello");
    await emit({ kind: "approvalRequested", ...call("a1") });
    await settle();
    const card = app.host.querySelector("[data-testid=approval-card]") as HTMLElement;
    expect(text(card, "approval-asker")).toBe("Asked by this chat and its model, m");
    // The server's words, as text.
    expect(text(card, "approval-description")).toBe("Echoes back the input <b>as is</b>.");
    expect(card.querySelector("[data-testid=approval-description] b")).toBeNull();
    expect(text(card, "approval-deadline")).toMatch(/^Denied in (2:00|1:59) if not answered$/);
    expect(text(card, "approval-reason")).toBe("No rule covers this");
    app.unmount();
  });

  it("says what happened after Deny, Always allow and a timeout, instead of why it asked", async () => {
    const { app, emit, send } = await chat([everything]);
    await send("hello");
    await emit({ kind: "approvalRequested", ...call("a1") });
    await emit({ kind: "approvalRequested", ...call("a2") });
    await emit({ kind: "approvalRequested", ...call("a3") });
    const cards = [...app.host.querySelectorAll("[data-testid=approval-card]")];
    await click(cards[0].querySelector("[data-testid=deny]"));
    await click(cards[1].querySelector("[data-testid=always-allow]"));
    await settle();
    await emit({ kind: "toolDenied", callId: "c-a3", reason: "nobody answered within 600 s" });

    expect(text(cards[0], "approval-outcome")).toBe("Denied by you.");
    expect(text(cards[1], "approval-outcome")).toBe("Approved by you. Rule created: always allow this tool.");
    expect(text(cards[2], "approval-outcome")).toBe("Timed out: nobody answered within 600 s, so it was denied.");
    for (const card of cards) {
      expect(card.querySelector("[data-testid=approval-reason]")).toBeNull();
      expect(card.querySelector("[data-testid=approval-deadline]")).toBeNull();
    }
    app.unmount();
  });
});

describe("a chat's empty state and a new chat in the list", () => {
  const summary = (id: string, title: string) => ({
    id,
    title,
    createdAt: 0,
    updatedAt: 0,
    messageCount: 2,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costMicroUsd: 0,
    unpricedCalls: 0,
  });

  it("invites a first message once set up, naming the tools the model can use", async () => {
    const { app, send, emit } = await chat([everything]);
    const empty = app.host.querySelector("[data-testid=chat-empty]");
    expect(empty?.textContent).toContain("What can I help with?");
    expect(empty?.textContent).toContain("The model can use 1 tool from your servers");
    await send("hello");
    await emit({ kind: "textDelta", text: "Hi" });
    expect(app.host.querySelector("[data-testid=chat-empty]")).toBeNull();
    app.unmount();
  });

  it("lists a new chat at once, and keeps the other chats usable while it answers", async () => {
    let stored = false;
    const asked: string[] = [];
    let channel: Channel<TurnEvent> | null = null;
    mockIPC((cmd, args) => {
      asked.push(cmd);
      if (cmd === "list_conversations")
        return stored ? [summary("c1", "Plan my week"), summary("old", "Old chat")] : [summary("old", "Old chat")];
      if (cmd === "current_conversation") return stored ? "c1" : null;
      if (cmd === "send_message") {
        stored = true;
        channel = (args as { onEvent: Channel<TurnEvent> }).onEvent;
        return new Promise<string>(() => undefined);
      }
    });
    const app = await mount(createElement(ChatPanel, { provider, servers: [], onOpenProvider: () => undefined }));
    const { host } = app;
    await type(host.querySelector("#chat-input") as HTMLTextAreaElement, "Plan my week");
    await press(host.querySelector("#chat-input"), "Enter");
    await settle();

    // Listed the moment it is sent, as the current chat.
    expect(host.querySelector("[data-testid=conversation-pending]")?.textContent).toContain("Plan my week");
    const old = () =>
      [...host.querySelectorAll("[data-testid=conversation]")].find((b) => b.textContent === "Old chat") as HTMLButtonElement;
    // The other chat is not greyed out: it can be renamed or deleted, and opening it says why it waits.
    expect(old().disabled).toBe(false);
    // Titles and their actions read as text in the UI's font, not as blue monospace links.
    expect(old().classList.contains("link")).toBe(false);
    expect(host.querySelector("[aria-label='Rename “Old chat”']")?.classList.contains("link")).toBe(false);
    expect((host.querySelector("[aria-label='Rename “Old chat”']") as HTMLButtonElement).disabled).toBe(false);
    expect((host.querySelector("[aria-label='Delete “Old chat”']") as HTMLButtonElement).disabled).toBe(false);
    await click(old());
    expect(host.querySelector("[data-testid=conversation-note]")?.textContent).toContain("Still answering in this chat");
    expect(asked).not.toContain("open_conversation");

    // Once the backend has stored it (by the turn's first event), it is listed for real.
    await act(async () => channel?.onmessage({ kind: "textDelta", text: "Sure" }));
    await settle();
    await settle();
    expect(host.querySelector("[data-testid=conversation-pending]")).toBeNull();
    const current = host.querySelector("[data-testid=conversation][aria-current=true]");
    expect(current?.textContent).toBe("Plan my week");
    app.unmount();
  });
});

describe("a turn as it goes and as it ends", () => {
  it("says an answer is still being written, until it is whole", async () => {
    const { app, emit, send, finish } = await chat();
    await send("hello");
    await emit({ kind: "textDelta", text: "Still writ" });
    const writing = app.host.querySelector("[data-testid=assistant-writing]");
    expect(writing?.textContent).toContain("Writing…");
    expect(writing?.querySelector(".spinner")?.getAttribute("aria-hidden")).toBe("true");
    await emit({ kind: "finished", text: "Still written", usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, costMicroUsd: null });
    await finish();
    expect(app.host.querySelector("[data-testid=assistant-writing]")).toBeNull();
    app.unmount();
  });

  it("says a stop is the user's, keeping what was written, and not as an error", async () => {
    const { app, emit, send } = await chat();
    await send("hello");
    await emit({ kind: "textDelta", text: "Half an answer" });
    await click(app.host.querySelector("#chat-stop"));
    await settle();
    expect(app.host.querySelector("[data-testid=chat-error]")).toBeNull();
    expect(app.host.querySelector("[data-testid=chat-notice]")?.textContent).toBe(
      "You stopped this answer. What was written so far is kept.",
    );
    expect(app.host.querySelector("[data-testid=assistant-message]")?.textContent).toContain("Half an answer");
    expect(app.host.querySelector("[data-testid=assistant-writing]")).toBeNull();
    app.unmount();
  });

  it("shows a failure as an alert with its icon and the provider's words", async () => {
    const { app, send, fail } = await chat();
    await send("hello");
    await fail("the provider answered with an error (HTTP 400): malformed");
    const error = app.host.querySelector("[data-testid=chat-error]");
    expect(error?.getAttribute("role")).toBe("alert");
    expect(error?.textContent).toBe("the provider answered with an error (HTTP 400): malformed");
    expect(error?.querySelector("svg")?.getAttribute("aria-hidden")).toBe("true");
    expect(app.host.querySelector("[data-testid=chat-notice]")).toBeNull();
    app.unmount();
  });
});
