// The model's answer as it streams into the chat, rendered as Markdown by React in jsdom against
// Tauri's IPC mock. Model text is untrusted: HTML in it stays text, nothing in it runs, and no
// link or image in it can take the window away from the app or fetch anything.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import type { Channel } from "@tauri-apps/api/core";
import ChatPanel from "./ChatPanel";
import Markdown from "./Markdown";
import type { ProviderView, TurnEvent } from "../ipc";
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

const pwned = () => (window as { __pwned?: unknown }).__pwned;

const hostile = [
  "Here is **what I found**:",
  "",
  "<script>window.__pwned = 'script'</script>",
  "",
  'An image: <img src="x" onerror="window.__pwned = \'img\'"> and <iframe src="https://evil.example/"></iframe>',
  "",
  "Read [the docs](https://evil.example/steal?q=secret) or [this](javascript:window.__pwned='link') or https://auto.example/x.",
  "",
  "![tracker](https://evil.example/pixel.png)",
  "",
  "| tool | result |",
  "| --- | --- |",
  "| echo | ok |",
  "",
  "```js",
  "const a = 1 < 2;",
  "```",
  "",
  "- [x] done",
  "- [ ] open",
].join("\n");

describe("the model's answer as Markdown", () => {
  it("renders Markdown as it streams, and keeps HTML, links and images inert", async () => {
    let channel: Channel<TurnEvent> | null = null;
    let finish: (text: string) => void = () => undefined;
    mockIPC((cmd, args) => {
      if (cmd === "list_conversations") return [];
      if (cmd === "current_conversation") return "c1";
      if (cmd === "send_message") {
        channel = (args as { onEvent: Channel<TurnEvent> }).onEvent;
        return new Promise<string>((resolve) => (finish = resolve));
      }
    });
    const app = await mount(createElement(ChatPanel, { provider, servers: [], onOpenProvider: () => undefined }));
    const { host } = app;
    await type(host.querySelector("#chat-input") as HTMLTextAreaElement, "What did the tool say?");
    await press(host.querySelector("#chat-input"), "Enter");
    await settle();
    expect(channel).not.toBeNull();
    const emit = async (event: TurnEvent) => {
      await act(async () => channel?.onmessage(event));
      await settle();
    };

    // Streamed pieces show at once, already as Markdown.
    await emit({ kind: "textDelta", text: "Here is **what I" });
    await emit({ kind: "textDelta", text: " found**:" });
    const streaming = host.querySelector("[data-testid=assistant-message]");
    expect(streaming?.textContent).toBe("Here is what I found:");
    expect(streaming?.querySelector("strong")?.textContent).toBe("what I found");

    await emit({
      kind: "finished",
      text: hostile,
      usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
      costMicroUsd: null,
    });
    await act(async () => finish(hostile));
    await settle();

    const answers = host.querySelectorAll("[data-testid=assistant-message]");
    expect(answers).toHaveLength(1);
    const answer = answers[0] as HTMLElement;
    const text = answer.textContent ?? "";

    // HTML from the model is shown as the text it is, and none of it became an element.
    expect(text).toContain("<script>window.__pwned = 'script'</script>");
    expect(text).toContain('<img src="x" onerror="window.__pwned = \'img\'">');
    expect(answer.querySelector("script, img, iframe, object, embed, a, form, input, style, link")).toBeNull();
    for (const element of answer.querySelectorAll("*")) {
      for (const attribute of element.getAttributeNames()) {
        expect(attribute.startsWith("on"), `${element.tagName} has ${attribute}`).toBe(false);
        expect(["href", "src", "srcset", "action", "formaction"]).not.toContain(attribute);
      }
    }
    expect(pwned()).toBeUndefined();

    // Links are their text and address, with nothing to follow; a javascript: one loses its address.
    expect(text).toContain("the docs <https://evil.example/steal?q=secret>");
    expect(text).toContain("this");
    expect(text).not.toContain("javascript:");
    expect(text).toContain("https://auto.example/x");
    const before = window.location.href;
    for (const link of answer.querySelectorAll(".md-link")) await click(link);
    expect(window.location.href).toBe(before);
    expect(pwned()).toBeUndefined();
    // An image is named, not loaded.
    expect(text).toContain("[image: tracker] <https://evil.example/pixel.png>");

    // The rest of Markdown is real structure: emphasis, a table, a code block, a task list.
    expect(answer.querySelector("strong")?.textContent).toBe("what I found");
    expect([...answer.querySelectorAll("th")].map((th) => th.textContent)).toEqual(["tool", "result"]);
    expect(answer.querySelector(".md-table table td")?.textContent).toBe("echo");
    expect(answer.querySelector("pre code")?.textContent).toBe("const a = 1 < 2;\n");
    const tasks = [...answer.querySelectorAll(".md-task")].map((t) => t.getAttribute("aria-label"));
    expect(tasks).toEqual(["done", "not done"]);
    expect(host.textContent).toContain("10 in · 20 out tokens");
    app.unmount();
  });

  it("keeps raw HTML blocks and entities as text", async () => {
    const app = await mount(
      createElement(Markdown, { text: '<div onclick="x()">hi</div>\n\n&lt;b&gt; and <b>bold?</b>' }),
    );
    expect(app.host.querySelector("div div, b")).toBeNull();
    expect(app.host.textContent).toContain('<div onclick="x()">hi</div>');
    expect(app.host.textContent).toContain("<b> and <b>bold?</b>");
    app.unmount();
  });
});
