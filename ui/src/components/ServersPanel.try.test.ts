// Calling a tool by hand with fields generated from its input schema, rendered by React in jsdom
// against Tauri's IPC mock: each field and the JSON textarea update each other, what is sent is
// the JSON, and a nested schema gets the JSON alone.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ServersPanel from "./ServersPanel";
import type { JsonValue, ServerSnapshot, ToolInfo } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const tool = (name: string, inputSchema: JsonValue): ToolInfo => ({
  name,
  title: null,
  description: "",
  inputSchema,
  outputSchema: null,
  readOnly: true,
  destructive: false,
  idempotent: true,
  openWorld: false,
});

const forecast = tool("forecast", {
  type: "object",
  properties: {
    city: { type: "string", description: "Where to look" },
    days: { type: "integer", default: 3, minimum: 1 },
    metric: { type: "boolean" },
    units: { type: "string", enum: ["c", "f"], enumNames: ["Celsius", "Fahrenheit"] },
    sky: { type: "string", title: "Sky", oneOf: [{ const: "sun", title: "Sunny" }, { const: "rain", title: "Rainy" }] },
    tags: { type: "array", items: { type: "string" } },
    sources: { type: "array", items: { type: "string", enum: ["radar", "satellite", "station"] } },
  },
  required: ["city"],
});

const nested = tool("search", {
  type: "object",
  properties: {
    query: { type: "string" },
    filter: { type: "object", properties: { after: { type: "string" } } },
  },
});

const server: ServerSnapshot = {
  id: "weather",
  name: "Weather",
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: "2025-11-25",
  tools: [forecast, nested],
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

/** The control a label (by the start of its text) names. */
function field(host: HTMLElement, label: string): HTMLInputElement {
  const found = [...host.querySelectorAll("label")].find((l) => (l.textContent ?? "").startsWith(label));
  if (!found) throw new Error(`no label ${label}`);
  const control = found.htmlFor ? document.getElementById(found.htmlFor) : found.querySelector("input");
  if (!control) throw new Error(`no control for ${label}`);
  return control as HTMLInputElement;
}

async function choose(select: HTMLSelectElement, value: string) {
  await act(async () => {
    select.value = value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

function backend() {
  const calls: unknown[] = [];
  mockIPC((cmd, args) => {
    if (cmd === "import_sources") return { claudeDesktop: null };
    if (cmd === "list_secrets") return [];
    if (cmd === "list_hosts") return [];
    if (cmd === "tool_settings") return { naming: "auto" };
    if (cmd === "call_tool") {
      calls.push(args);
      return { isError: false, text: "ok", raw: {} };
    }
  });
  return calls;
}

describe("calling a tool by hand", () => {
  it("fills the JSON from the fields and the fields from the JSON, and sends the JSON", async () => {
    const calls = backend();
    const app = await mount(createElement(ServersPanel, { servers: [server], catalog: null }));
    const { host } = app;
    expect(host.querySelector("[data-testid=server-era]")?.textContent).toBe("MCP 2025-11-25");
    await click(host.querySelector("[data-testid=tool-forecast]"));
    const json = host.querySelector("[data-testid=try-arguments]") as HTMLTextAreaElement;
    const args = () => JSON.parse(json.value);

    // Prefilled: defaults, first choices, empty values; the fields show the same.
    expect(args()).toEqual({ city: "", days: 3, metric: false, units: "c", sky: "sun", tags: [], sources: [] });
    const form = host.querySelector("[data-testid=schema-form]") as HTMLFieldSetElement;
    expect(form.compareDocumentPosition(json) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(field(host, "city").getAttribute("aria-required")).toBe("true");
    expect([...host.querySelectorAll("label")].some((l) => l.textContent === "city (required)")).toBe(true);
    expect(field(host, "days").value).toBe("3");
    expect((field(host, "units") as unknown as HTMLSelectElement).selectedOptions[0].textContent).toBe("Celsius");
    expect((field(host, "Sky") as unknown as HTMLSelectElement).selectedOptions[0].textContent).toBe("Sunny");

    // Typing in the fields changes the JSON.
    await type(field(host, "city"), "Paris");
    await type(field(host, "days"), "5");
    await click(field(host, "metric"));
    await choose(field(host, "units") as unknown as HTMLSelectElement, "1");
    await choose(field(host, "Sky") as unknown as HTMLSelectElement, "");
    await type(field(host, "tags") as unknown as HTMLTextAreaElement, "rain\nwind\n");
    await click(field(host, "satellite"));
    expect(args()).toEqual({ city: "Paris", days: 5, metric: true, units: "f", tags: ["rain", "wind"], sources: ["satellite"] });
    // What is being typed stays as typed (the new line), and a number that is not one is refused.
    expect((field(host, "tags") as unknown as HTMLTextAreaElement).value).toBe("rain\nwind\n");
    await type(field(host, "days"), "5.5");
    expect(field(host, "days").value).toBe("5.5");
    expect(field(host, "days").getAttribute("aria-invalid")).toBe("true");
    expect(args().days).toBe(5);

    // Editing the JSON changes the fields.
    await type(json, '{"city": "Rome", "days": 7, "sources": ["radar", "station"]}');
    expect(field(host, "city").value).toBe("Rome");
    expect(field(host, "days").value).toBe("7");
    expect(field(host, "days").getAttribute("aria-invalid")).toBe("false");
    expect(field(host, "metric").checked).toBe(false);
    expect((field(host, "units") as unknown as HTMLSelectElement).value).toBe("");
    expect(field(host, "radar").checked).toBe(true);
    expect(field(host, "satellite").checked).toBe(false);

    // JSON that is not an object switches the fields off until it is one again.
    await type(json, '{"city": "Ro');
    expect(form.disabled).toBe(true);
    expect(form.querySelector("[role=status]")?.textContent).toContain("not an object");
    await type(json, '{"city": "Oslo", "extra": {"kept": true}}');
    expect(form.disabled).toBe(false);
    await type(field(host, "days"), "2");
    expect(json.value).toBe(JSON.stringify({ city: "Oslo", extra: { kept: true }, days: 2 }, null, 2));

    await click(host.querySelector("[data-testid=try-call]"));
    await settle();
    expect(calls).toEqual([{ serverId: "weather", tool: "forecast", arguments: JSON.parse(json.value) }]);
    expect(host.querySelector("[data-testid=try-result]")?.textContent).toBe("ok");
    app.unmount();
  });

  it("takes a nested schema as JSON only", async () => {
    const calls = backend();
    const app = await mount(createElement(ServersPanel, { servers: [server], catalog: null }));
    const { host } = app;
    await click(host.querySelector("[data-testid=tool-search]"));
    expect(host.querySelector("[data-testid=schema-form]")).toBeNull();
    expect(host.querySelector("[data-testid=try-json-only]")?.textContent).toContain("JSON");
    const json = host.querySelector("[data-testid=try-arguments]") as HTMLTextAreaElement;
    expect(JSON.parse(json.value)).toEqual({ query: "", filter: {} });
    await type(json, '{"query": "q", "filter": {"after": "2024"}}');
    await click(host.querySelector("[data-testid=try-call]"));
    await settle();
    expect(calls).toEqual([{ serverId: "weather", tool: "search", arguments: { query: "q", filter: { after: "2024" } } }]);
    app.unmount();
  });
});
