// The composer's extras, rendered by React in jsdom against Tauri's IPC mock: a template's
// variables filled and read before it is attached, a listed resource attached, a prompt's
// arguments filled (a required one first) and its messages inserted as text.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ChatExtras, { promptText } from "./ChatExtras";
import type { ServerSnapshot } from "../ipc";
import { click, mount, type } from "../testing";

afterEach(() => clearMocks());

const server: ServerSnapshot = {
  id: "m",
  name: "Modern",
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: "2026-07-28",
  tools: [],
  resources: [{ uri: "notes://readme", name: "readme", description: null, mimeType: "text/plain" }],
  resourceTemplates: [
    { uriTemplate: "notes://{topic}", name: "note", description: "A note on a topic", mimeType: null, variables: ["topic"] },
  ],
  prompts: [
    {
      name: "plan_trip",
      description: "Plans a trip to a city",
      arguments: ["city", "days"],
      argumentInfo: [
        { name: "city", description: null, required: true },
        { name: "days", description: "How long", required: false },
      ],
    },
  ],
  roots: [],
  signedIn: null,
  needsScope: null,
  refusedTools: [],
  sandbox: null,
  readsUntrusted: false,
  sendsOut: false,
  reviewResults: [],
};

describe("the composer's extras", () => {
  it("fills a template, reads it, and attaches the resource it names", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      seen.push({ cmd, args });
      if (cmd === "read_resource_template")
        return { uri: "notes://oslo%20trip", result: { contents: [{ uri: "notes://oslo%20trip", text: "Notes on oslo trip" }] } };
    });
    const attached: unknown[] = [];
    const { host, unmount } = await mount(
      createElement(ChatExtras, { servers: [server], onAttach: (a) => attached.push(a), onInsert: () => undefined }),
    );
    await click(host.querySelector("[data-testid=attach-resource]"));
    await type(host.querySelector("input[aria-label='note: topic']") as HTMLInputElement, "oslo trip");
    await click(host.querySelector("button[aria-label='Read note']"));
    expect(seen).toEqual([
      { cmd: "read_resource_template", args: { serverId: "m", template: "notes://{topic}", values: { topic: "oslo trip" } } },
    ]);
    expect(host.querySelector("[data-testid=template-preview] pre")?.textContent).toBe("Notes on oslo trip");
    await click(host.querySelector("button[aria-label='Attach notes://oslo%20trip']"));
    expect(attached).toEqual([{ serverId: "m", uri: "notes://oslo%20trip", label: "notes://oslo%20trip" }]);

    await click(host.querySelector("[data-testid=attach-resource]"));
    await click(host.querySelector("button[aria-label='Attach readme']"));
    expect(attached[1]).toEqual({ serverId: "m", uri: "notes://readme", label: "readme" });
    unmount();
  });

  it("fills a prompt's arguments and inserts its messages", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      seen.push({ cmd, args });
      if (cmd === "get_prompt")
        return { messages: [{ role: "user", content: { type: "text", text: "Plan a 2-day trip to Oslo." } }] };
    });
    const inserted: string[] = [];
    const { host, unmount } = await mount(
      createElement(ChatExtras, { servers: [server], onAttach: () => undefined, onInsert: (t) => inserted.push(t) }),
    );
    await click(host.querySelector("[data-testid=use-prompt]"));
    const insert = host.querySelector("[data-testid=insert-prompt]") as HTMLButtonElement;
    expect(insert.disabled).toBe(true);
    expect(host.textContent).toContain("Fill in: city");
    await type(host.querySelector("input[aria-label=city]") as HTMLInputElement, "Oslo");
    await click(host.querySelector("[data-testid=insert-prompt]"));
    expect(seen).toEqual([{ cmd: "get_prompt", args: { serverId: "m", name: "plan_trip", arguments: { city: "Oslo" } } }]);
    expect(inserted).toEqual(["Plan a 2-day trip to Oslo."]);
    unmount();
  });

  it("labels another speaker's turns when a prompt has them", () => {
    expect(
      promptText({
        messages: [
          { role: "user", content: { type: "text", text: "Hi" } },
          { role: "assistant", content: { type: "text", text: "Hello" } },
          { role: "user", content: { type: "resource", resource: { uri: "notes://a", text: "A note" } } },
        ],
      }),
    ).toBe("Hi\n\nAssistant: Hello\n\nA note");
  });
});
