// The conversation list's search box, against Tauri's IPC mock: it is labelled, a typed word
// becomes one `list_conversations` query (not one per key), the backend's answer is the list, a
// late answer to an older query never replaces a newer one, and clearing shows everything again.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { computeAccessibleName } from "dom-accessibility-api";
import Conversations, { SEARCH_DELAY_MS } from "./Conversations";
import type { ConversationSummary } from "../ipc";
import { mount, press, settle, type, withStyles } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const conversation = (id: string, title: string): ConversationSummary => ({
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

const all = [conversation("a", "Weather in Lisbon"), conversation("b", "Rename the photos")];

const props = { version: 0, current: null, busy: false, onOpen: () => undefined, onDeleted: () => undefined };

const titles = (host: HTMLElement) =>
  [...host.querySelectorAll("[data-testid=conversation]")].map((b) => b.textContent);

describe("searching conversations", () => {
  it("sends the typed query to list_conversations and lists what the backend found", async () => {
    const searches: (string | null)[] = [];
    mockIPC((cmd, args) => {
      if (cmd !== "list_conversations") return;
      const search = (args as { search: string | null }).search;
      searches.push(search);
      return search === null ? all : all.filter((c) => c.title.toLowerCase().includes(search.toLowerCase()));
    });
    const app = await mount(createElement(Conversations, props));
    const { host } = app;
    expect(searches).toEqual([null]);
    expect(titles(host)).toEqual(["Weather in Lisbon", "Rename the photos"]);

    const box = host.querySelector("#conversation-search") as HTMLInputElement;
    expect(box.type).toBe("search");
    expect(computeAccessibleName(box)).toBe("Search conversations");
    expect(box.closest("[role=search]")).not.toBeNull();

    // Typing "lis" key by key asks once, for the whole word.
    await type(box, "l");
    await type(box, "li");
    await type(box, "lis");
    await settle(SEARCH_DELAY_MS + 50);
    expect(searches).toEqual([null, "lis"]);
    expect(titles(host)).toEqual(["Weather in Lisbon"]);
    expect(host.querySelector("[data-testid=conversation-search-result]")?.textContent).toBe(
      "1 conversation matches “lis”.",
    );

    await type(box, "  zebra ");
    await settle(SEARCH_DELAY_MS + 50);
    expect(searches.at(-1)).toBe("zebra");
    expect(titles(host)).toEqual([]);
    expect(host.querySelector("[data-testid=conversation-search-result]")?.textContent).toBe(
      "No conversation matches “zebra”.",
    );

    // Escape clears the box, and the whole list is back at once.
    await press(box, "Escape");
    await settle();
    expect(box.value).toBe("");
    expect(searches.at(-1)).toBe(null);
    expect(titles(host)).toEqual(["Weather in Lisbon", "Rename the photos"]);
    app.unmount();
  });

  it("shows the answer to the latest query even when an older one answers last", async () => {
    const pending: { search: string | null; resolve: (list: ConversationSummary[]) => void }[] = [];
    mockIPC((cmd, args) => {
      if (cmd !== "list_conversations") return;
      return new Promise<ConversationSummary[]>((resolve) =>
        pending.push({ search: (args as { search: string | null }).search, resolve }),
      );
    });
    const app = await mount(createElement(Conversations, props));
    const box = app.host.querySelector("#conversation-search") as HTMLInputElement;
    await type(box, "weather");
    await settle(SEARCH_DELAY_MS + 50);
    await type(box, "photos");
    await settle(SEARCH_DELAY_MS + 50);
    expect(pending.map((p) => p.search)).toEqual([null, "weather", "photos"]);

    pending[2].resolve([all[1]]);
    await settle();
    pending[1].resolve([all[0]]);
    pending[0].resolve(all);
    await settle();
    expect(titles(app.host)).toEqual(["Rename the photos"]);
    app.unmount();
  });
});

describe("the conversation list's look", () => {
  it("shows titles, Rename and Delete in the UI's font and colours, not as blue monospace links", async () => {
    mockIPC((cmd) => (cmd === "list_conversations" ? all : undefined));
    const unstyle = withStyles();
    const app = await mount(createElement(Conversations, { ...props, current: "a" }));
    const buttons = [
      ...app.host.querySelectorAll<HTMLElement>("[data-testid=conversation]"),
      ...app.host.querySelectorAll<HTMLElement>("[aria-label^=Rename], [aria-label^=Delete]"),
    ];
    expect(buttons).toHaveLength(6);
    for (const button of buttons) {
      const style = getComputedStyle(button);
      expect(style.fontFamily, button.textContent ?? "").not.toMatch(/monospace/);
      expect(style.color, button.textContent ?? "").not.toBe("var(--link)");
    }
    expect(getComputedStyle(buttons[0]).color).toBe("var(--selected-text)");
    expect(getComputedStyle(buttons[1]).color).toBe("var(--text)");
    app.unmount();
    unstyle();
  });
});
