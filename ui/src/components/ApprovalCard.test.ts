// A call's result on its card: short results are open, long ones start folded, the fold is a
// native disclosure (a focusable summary that Enter and Space toggle), and the `<pre>` always
// holds the whole text as text.
import { afterEach, describe, expect, it, vi } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ApprovalCard, { isLong, LONG_CHARS, LONG_LINES } from "./ApprovalCard";
import type { PendingCall } from "../ipc";
import { click, mount, settle } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const call: PendingCall = {
  id: "a1",
  request: "toolCall",
  callId: "c1",
  serverId: "files",
  serverName: "Files",
  tool: "read_file",
  arguments: { path: "/tmp/big.log" },
  readOnly: true,
  destructive: false,
  inputSchema: {},
  reason: "",
  beyondRules: false,
};

const card = (output: string, state: "done" | "denied" = "done") =>
  mount(createElement(ApprovalCard, { call, state, output, onAnswer: async () => undefined }));

describe("a tool call's result", () => {
  it("is open when short", async () => {
    const app = await card("Echo: hi");
    const details = app.host.querySelector("[data-testid=tool-result]") as HTMLDetailsElement;
    expect(details.tagName).toBe("DETAILS");
    expect(details.open).toBe(true);
    expect(app.host.querySelector("[data-testid=tool-output]")?.textContent).toBe("Echo: hi");
    expect(details.querySelector("summary")?.textContent).toBe("Result (1 line, 8 characters)");
    app.unmount();
  });

  it("starts folded when long, holds the whole text, and opens and folds again", async () => {
    const long = Array.from({ length: 200 }, (_, i) => `line ${i} <b onmouseover="x()">not html</b>`).join("\n");
    const app = await card(long);
    const details = app.host.querySelector("[data-testid=tool-result]") as HTMLDetailsElement;
    const summary = details.querySelector("summary") as HTMLElement;
    const output = app.host.querySelector("[data-testid=tool-output]") as HTMLElement;

    expect(details.open).toBe(false);
    expect(output.tagName).toBe("PRE");
    expect(output.textContent).toBe(long);
    expect(output.querySelector("*")).toBeNull();
    expect(summary.textContent).toContain("200 lines");
    // The summary is the disclosure's button: in the tab order, toggled by click, Enter or Space.
    expect(summary.tabIndex).toBe(0);

    await click(summary);
    expect(details.open).toBe(true);
    expect(output.textContent).toBe(long);
    await click(summary);
    expect(details.open).toBe(false);
    app.unmount();
  });

  it("reveals what Toolgate removed only when asked, for this result, and hides it again", async () => {
    const asked: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "reveal_result") {
        asked.push(args);
        return "token ghp_<b>real</b>";
      }
      return null;
    });
    const app = await card("token [secret removed: GitHub Token]");
    const output = () => app.host.querySelector("[data-testid=tool-output]");
    expect(asked).toEqual([]);
    expect(output()?.textContent).toBe("token [secret removed: GitHub Token]");
    await click(app.host.querySelector("[data-testid=reveal-result]"));
    await settle();
    expect(asked).toEqual([{ callId: "c1" }]);
    // The revealed text is still the server's: text, never markup.
    expect(output()?.textContent).toBe("token ghp_<b>real</b>");
    expect(output()?.querySelector("b")).toBeNull();
    await click(app.host.querySelector("[data-testid=hide-result]"));
    expect(output()?.textContent).toBe("token [secret removed: GitHub Token]");
    app.unmount();
  });

  it("offers no reveal for a result with nothing removed, nor for a denial", async () => {
    const plain = await card("Echo: hi");
    expect(plain.host.querySelector("[data-testid=reveal-result]")).toBeNull();
    plain.unmount();
    const denied = await card("Refused [secret removed: GitHub Token]", "denied");
    expect(denied.host.querySelector("[data-testid=reveal-result]")).toBeNull();
    denied.unmount();
  });

  it("names a denial's reason as such", async () => {
    const app = await card("not now", "denied");
    expect(app.host.querySelector("summary")?.textContent).toContain("Reason");
    expect(app.host.querySelector("[data-testid=tool-output]")?.textContent).toBe("not now");
    app.unmount();
  });

  it("is long past a number of lines or characters", () => {
    expect(isLong("short")).toBe(false);
    expect(isLong("\n".repeat(LONG_LINES - 1))).toBe(false);
    expect(isLong("\n".repeat(LONG_LINES))).toBe(true);
    expect(isLong("x".repeat(LONG_CHARS))).toBe(false);
    expect(isLong("x".repeat(LONG_CHARS + 1))).toBe(true);
  });

  it("shows the result's images, only of the raster types and only as data: URLs", async () => {
    const images = [
      { mimeType: "image/png", data: "iVBORw0KGgo=" },
      { mimeType: "IMAGE/JPEG", data: "/9j/4AAQ\nSkZJRg==" },
      { mimeType: "image/svg+xml", data: "PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIi8+" },
      { mimeType: "text/html", data: "PGI+aGk8L2I+" },
      { mimeType: "image/gif", data: 'R0lG"><script>x()</script>' },
    ];
    const app = await mount(createElement(ApprovalCard, { call, state: "done", output: "two pictures", images, onAnswer: async () => undefined }));
    const shown = [...app.host.querySelectorAll("[data-testid=result-images] img")] as HTMLImageElement[];
    expect(shown.map((img) => img.getAttribute("src"))).toEqual([
      "data:image/png;base64,iVBORw0KGgo=",
      "data:image/jpeg;base64,/9j/4AAQSkZJRg==",
    ]);
    expect(shown.map((img) => img.alt)).toEqual(["Image from read_file", "Image from read_file"]);
    // The others are named, not shown; nothing in them becomes markup.
    const notes = [...app.host.querySelectorAll("[data-testid=result-images] p")].map((p) => p.textContent);
    expect(notes).toHaveLength(3);
    expect(notes[0]).toContain("image/svg+xml");
    expect(notes[1]).toContain("text/html");
    expect(app.host.querySelector("script")).toBeNull();
    // The result's text is still there, above its images.
    expect(app.host.querySelector("[data-testid=tool-output]")?.textContent).toBe("two pictures");
    app.unmount();
  });
});

describe("a call waiting for an answer", () => {
  const waiting = { ...call, reason: "asking because no rule covers this" };
  const ask = (props: Partial<Parameters<typeof ApprovalCard>[0]> = {}) =>
    mount(createElement(ApprovalCard, { call: waiting, state: "waiting", onAnswer: async () => undefined, ...props }));

  it("names the connected app that asks", async () => {
    const app = await ask({ call: { ...waiting, client: "claude-code" } });
    expect(app.host.querySelector("[data-testid=approval-asker]")?.textContent).toBe(
      "Asked by the connected app claude-code",
    );
    app.unmount();
  });

  it("names the chat that asks by its title where the chat is not in view (Activity), as text", async () => {
    const app = await ask({ call: { ...waiting, chat: "Plan <b>the</b> trip" } });
    const asker = app.host.querySelector("[data-testid=approval-asker]");
    expect(asker?.textContent).toBe("Asked by the chat “Plan <b>the</b> trip”");
    expect(asker?.querySelector("b")).toBeNull();
    app.unmount();
    // In the chat itself, the chat's own words win.
    const inChat = await ask({ call: { ...waiting, chat: "Plan" }, asker: "this chat and its model, m" });
    expect(inChat.host.querySelector("[data-testid=approval-asker]")?.textContent).toBe("Asked by this chat and its model, m");
    inChat.unmount();
  });

  it("has its buttons on one row, allowing first, refusing last, and the reason box under them", async () => {
    const app = await ask();
    const actions = app.host.querySelector("[data-testid=approval-actions]") as HTMLElement;
    const rows = [...actions.children];
    const buttons = [...rows[0].querySelectorAll("button")].map((b) => b.dataset.testid);
    expect(buttons).toEqual(["approve", "allow-conversation", "always-allow", "edit", "deny", "always-deny"]);
    expect(rows[0].querySelector("input")).toBeNull();
    expect(rows[1].querySelector("input")?.getAttribute("aria-label")).toBe("Reason for denying (optional)");
    app.unmount();
  });

  it("names where a value came from, and offers no rule where a rule would not change the outcome", async () => {
    const reason =
      "asking because the value “US13 0000 4422” at /recipient came only from outside content: a result of " +
      "get_most_recent_transactions on Bank (call t1, at /content/0/text); otherwise it would be allowed by your rule";
    const answers: unknown[] = [];
    const app = await ask({
      call: { ...waiting, tool: "send_money", arguments: { recipient: "US13 0000 4422" }, reason, beyondRules: true },
      onAnswer: async (d) => {
        answers.push(d);
      },
    });
    // The provenance, in the card's own words, as text.
    const shown = app.host.querySelector("[data-testid=approval-reason]")?.textContent ?? "";
    expect(shown).toContain("“US13 0000 4422” at /recipient came only from outside content");
    expect(shown).toContain("get_most_recent_transactions on Bank (call t1");
    expect(app.host.querySelector("[data-testid=approval-beyond-rules]")?.textContent).toContain(
      "No rule can let this run without asking",
    );
    // Only the answers that change the outcome: this once, edit, deny (and a deny rule).
    const buttons = [...app.host.querySelectorAll("[data-testid=approval-actions] button")].map(
      (b) => (b as HTMLElement).dataset.testid,
    );
    expect(buttons).toEqual(["approve", "edit", "deny", "always-deny"]);
    await click(app.host.querySelector("[data-testid=approve]"));
    expect(answers).toEqual([{ decision: "approve" }]);
    app.unmount();
  });

  it("says what the buttons that save a rule would save, before one is pressed", async () => {
    const scope = async (call: PendingCall) => {
      const app = await ask({ call });
      const text = app.host.querySelector("[data-testid=approval-scope]")?.textContent;
      app.unmount();
      return text;
    };
    expect(await scope(waiting)).toBe(
      `Always allow saves a rule: ${waiting.tool} on ${waiting.serverName} runs without asking in every chat and for every ` +
        "connected app, with any arguments; Always deny saves one refusing it. Allow in this chat lets it run without " +
        "asking until this chat ends. Rules are listed in Activity.",
    );
    expect(await scope({ ...waiting, client: "claude-code" })).toContain("runs without asking when claude-code asks");
    expect(await scope({ ...waiting, client: "claude-code" })).not.toContain("Allow in this chat");
    expect(await scope({ ...waiting, beyondRules: true })).toBe(
      `Always deny saves a rule refusing ${waiting.tool} on ${waiting.serverName} in every chat and for every connected app. ` +
        "Rules are listed in Activity.",
    );
    expect(await scope({ ...waiting, request: "sampling", tool: "sampling/createMessage" })).toContain(
      `letting ${waiting.serverName} use your model without asking`,
    );
  });

  it("counts down the time left, and says it timed out when it has", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"] });
    try {
      const app = await ask({ deadline: Date.now() + 65_000 });
      const left = () => app.host.querySelector("[data-testid=approval-deadline]")?.textContent;
      expect(left()).toBe("Denied in 1:05 if not answered");
      expect(app.host.querySelector("[role=timer]")).not.toBeNull();
      await act(async () => vi.advanceTimersByTime(20_000));
      expect(left()).toBe("Denied in 45 s if not answered");
      await act(async () => vi.advanceTimersByTime(46_000));
      expect(left()).toBe("Timed out: denied");
      app.unmount();
    } finally {
      vi.useRealTimers();
    }
  });

  it("says what happened once decided, not why it asked", async () => {
    const app = await ask({ state: "running", outcome: "Approved by you, this once." });
    expect(app.host.querySelector("[data-testid=approval-outcome]")?.textContent).toBe("Approved by you, this once.");
    expect(app.host.querySelector("[data-testid=approval-reason]")).toBeNull();
    app.unmount();
  });
});
