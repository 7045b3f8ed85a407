// The panel of servers' requests, rendered by React in jsdom against Tauri's IPC mock: it shows
// only servers' own requests, refreshes when the backend says the gate changed, and sends the
// typed answer to a question as the edited arguments.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import ServerRequests from "./ServerRequests";
import type { PendingCall } from "../ipc";

// React's act() needs to know it runs in a test.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => clearMocks());

const base = {
  callId: "",
  serverId: "everything",
  serverName: "Everything",
  readOnly: false,
  destructive: false,
  reason: "",
};

const question: PendingCall = {
  ...base,
  id: "q1",
  request: "elicitation",
  tool: "elicitation/create",
  message: "What is your name?",
  arguments: { count: 42 },
  inputSchema: { type: "object", properties: { name: { type: "string" } } },
};

const toolCall: PendingCall = { ...base, id: "t1", request: "toolCall", tool: "echo", arguments: {} };

const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));

describe("requests from servers", () => {
  it("shows a server's question, refreshed on change, and sends the typed answer", async () => {
    let waiting: PendingCall[] = [toolCall];
    const answers: unknown[] = [];
    mockIPC(
      (cmd, args) => {
        if (cmd === "pending_approvals") return waiting;
        if (cmd === "answer_approval") answers.push(args);
      },
      { shouldMockEvents: true },
    );
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(ServerRequests)));
    await settle();
    expect(host.textContent).toBe("");

    waiting = [toolCall, question];
    await act(() => emit("approvals-changed"));
    await settle();
    expect(host.querySelectorAll("[data-testid=approval-card]")).toHaveLength(1);
    expect(host.querySelector("[data-testid=approval-message]")?.textContent).toBe("What is your name?");

    const answer = host.querySelector("textarea") as HTMLTextAreaElement;
    expect(JSON.parse(answer.value)).toEqual({ count: 42 });
    expect(answer.getAttribute("aria-label")).toBe("Your answer (JSON)");
    expect(host.querySelector("[data-testid=always-allow]")).toBeNull();

    // React tracks the value through its own setter; set it the way typing would.
    const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")?.set;
    await act(async () => {
      setValue?.call(answer, '{"count": 42, "name": "Ada"}');
      answer.dispatchEvent(new Event("input", { bubbles: true }));
    });
    const send = host.querySelector("[data-testid=approve-edited]") as HTMLButtonElement;
    expect(send.textContent).toBe("Send answer");
    await act(async () => send.click());
    expect(answers).toEqual([{ id: "q1", decision: { decision: "approveEdited", arguments: { count: 42, name: "Ada" } } }]);
    act(() => root.unmount());
  });
});
