// A result held for review: shown as text, passed, edited (what is sent is the edited text) or
// withheld, from buttons or keys.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import ApprovalCard from "./ApprovalCard";
import type { Decision, PendingCall } from "../ipc";
import { click, mount, press, type } from "../testing";

afterEach(() => {
  document.body.innerHTML = "";
});

const held: PendingCall = {
  id: "r1",
  request: "toolResult",
  callId: "c1",
  serverId: "mail",
  serverName: "Mail",
  tool: "read_mail",
  arguments: { text: 'From: boss <b onmouseover="x()">hi</b>\napi key sk-live-1' },
  readOnly: false,
  destructive: false,
  inputSchema: {},
  reason: "You review the results of read_mail before the model sees them",
  beyondRules: false,
  message: 'Called with {"folder":"inbox"}',
};

async function card(call: PendingCall = held) {
  const answers: Decision[] = [];
  const app = await mount(
    createElement(ApprovalCard, { call, state: "waiting", onAnswer: async (d: Decision) => void answers.push(d) }),
  );
  return { app, answers };
}

describe("a result held for review", () => {
  it("shows the result as text, never HTML", async () => {
    const { app } = await card();
    const text = app.host.querySelector("[data-testid=review-text]") as HTMLElement;
    expect(text.tagName).toBe("PRE");
    expect(text.textContent).toContain("sk-live-1");
    expect(text.querySelector("*")).toBeNull();
    expect(app.host.querySelector("[data-testid=result-review]")?.getAttribute("aria-label")).toBe(
      "Review the result of read_mail on Mail before the model sees it",
    );
    // No "always allow" for a result: each is reviewed.
    expect(app.host.querySelector("[data-testid=always-allow]")).toBeNull();
    app.unmount();
  });

  it("passes, edits and withholds", async () => {
    let { app, answers } = await card();
    await click(app.host.querySelector("[data-testid=pass-result]"));
    expect(answers).toEqual([{ decision: "approve" }]);
    app.unmount();

    ({ app, answers } = await card());
    await click(app.host.querySelector("[data-testid=edit-result-button]"));
    await type(app.host.querySelector("[data-testid=edit-result]") as HTMLTextAreaElement, "api key [redacted]");
    await click(app.host.querySelector("[data-testid=pass-edited]"));
    expect(answers).toEqual([{ decision: "approveEdited", arguments: { text: "api key [redacted]" } }]);
    app.unmount();

    ({ app, answers } = await card({ ...held, client: "claude-code" }));
    expect(app.host.textContent).toContain("before claude-code sees it");
    await press(app.host.querySelector("[data-testid=result-review]"), "d");
    expect(answers).toEqual([{ decision: "deny", reason: null }]);
    app.unmount();
  });
});
