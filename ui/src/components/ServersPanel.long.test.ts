// A server with a thousand tools and long descriptions, rendered by React in jsdom against Tauri's
// IPC mock: every tool is listed with how the model sees it, the list is marked for containment
// (rows out of view are skipped by the browser's layout), it can be filtered, and a tool far down
// the list can still be chosen and called. No timing is asserted: jsdom does no layout.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ServersPanel from "./ServersPanel";
import type { ServerSnapshot, ToolCatalogView, ToolInfo } from "../ipc";
import { click, mount, settle, type } from "../testing";
import css from "../styles.css?raw";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const COUNT = 1000;
const name = (i: number) => `tool_${String(i).padStart(4, "0")}`;

const tools: ToolInfo[] = Array.from({ length: COUNT }, (_, i) => ({
  name: name(i),
  title: null,
  description: `Does thing number ${i}. ` + "A long description that goes on and on. ".repeat(i % 7 === 0 ? 60 : 3),
  inputSchema: { type: "object", properties: { [`arg${i}`]: { type: i % 2 ? "string" : "number" } } },
  outputSchema: null,
  readOnly: i % 3 === 0,
  destructive: i % 5 === 0,
  idempotent: false,
  openWorld: false,
}));

const server: ServerSnapshot = {
  id: "big",
  name: "Big server",
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: null,
  tools,
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

const catalog: ToolCatalogView = {
  tools: tools.map((t, i) => ({
    serverId: "big",
    serverName: "Big server",
    tool: { name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: {} },
    state:
      i % 10 === 9
        ? { state: "hidden", reason: { kind: "disabledByUser" } }
        : { state: "visible", modelName: `big__${t.name}` },
    // One tool named as if it belonged to another server is flagged.
    ...(i === 5 ? { imitates: "files" } : {}),
  })),
  budget: { tools: 900, limit: 1000, estimatedTokens: 123456 },
  problem: null,
};

describe("a server with a thousand tools", () => {
  it("lists them all, contained, filterable, and any one can be called", async () => {
    const calls: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "import_sources") return { claudeDesktop: null };
      if (cmd === "list_secrets") return [];
      if (cmd === "list_hosts") return [];
      if (cmd === "call_tool") {
        calls.push(args);
        return { isError: false, text: "ok", raw: {} };
      }
    });
    const app = await mount(createElement(ServersPanel, { servers: [server], catalog }));
    const card = app.host.querySelector("[data-testid=server-big]") as HTMLElement;
    const list = card.querySelector("ul.tools") as HTMLElement;

    expect(list.querySelectorAll(":scope > li")).toHaveLength(COUNT);
    expect(list.classList.contains("long")).toBe(true);
    expect(list.getAttribute("aria-label")).toBe("Tools of Big server");
    expect(card.querySelector(`[data-testid=model-name-${name(0)}]`)?.textContent).toContain("model sees: big__tool_0000");
    expect(card.querySelector(`[data-testid=model-name-${name(999)}]`)?.textContent).toContain("hidden: turned off");
    expect(card.querySelectorAll("[data-testid^=imitates-]")).toHaveLength(1);
    expect(card.querySelector(`[data-testid=imitates-${name(5)}]`)?.textContent).toBe(
      "named like a tool of server files",
    );
    // The rows of a long list are skipped by layout while out of view, and keep a size meanwhile.
    const rule = css.match(/\.tools\.long li\s*\{([^}]*)\}/)?.[1] ?? "";
    expect(rule).toMatch(/content-visibility:\s*auto/);
    expect(rule).toMatch(/contain-intrinsic-size:\s*auto \d+px/);

    // The filter narrows the list by name or description, and says how many are shown.
    const filter = card.querySelector("[data-testid=tool-filter]") as HTMLInputElement;
    expect(card.querySelector(`label[for="${filter.id}"]`)?.textContent).toBe("Filter tools");
    await type(filter, "number 99");
    expect([...list.querySelectorAll("[data-testid^=tool-tool_]")].map((b) => b.textContent)).toEqual([
      "tool_0099",
      ...Array.from({ length: 10 }, (_, i) => name(990 + i)),
    ]);
    expect(card.querySelector("[role=status]")?.textContent).toBe("11 of 1000");
    await type(filter, "");
    expect(list.querySelectorAll(":scope > li")).toHaveLength(COUNT);

    // The last tool is chosen and called; its whole description is shown with the form.
    await click(card.querySelector(`[data-testid=tool-${name(999)}]`));
    expect(card.querySelector(`[data-testid=tool-${name(999)}]`)?.getAttribute("aria-pressed")).toBe("true");
    expect(card.querySelector("label[for=args-big]")?.textContent).toBe("Arguments for tool_0999 (JSON)");
    expect(card.querySelector("[data-testid=try-description]")?.textContent).toBe(tools[999].description);
    const args = card.querySelector("[data-testid=try-arguments]") as HTMLTextAreaElement;
    expect(JSON.parse(args.value)).toEqual({ arg999: "" });
    await click(card.querySelector("[data-testid=try-call]"));
    await settle();
    expect(calls).toEqual([{ serverId: "big", tool: "tool_0999", arguments: { arg999: "" } }]);
    expect(card.querySelector("[data-testid=try-result]")?.textContent).toBe("ok");

    // Choosing another tool starts from that tool's own example arguments.
    await click(card.querySelector(`[data-testid=tool-${name(998)}]`));
    const next = card.querySelector("[data-testid=try-arguments]") as HTMLTextAreaElement;
    expect(JSON.parse(next.value)).toEqual({ arg998: 0 });
    expect(card.querySelector("[data-testid=try-result]")).toBeNull();
    app.unmount();
    // jsdom is slow to build a thousand rows; a loaded machine must not fail this on time alone.
  }, 60_000);
});
