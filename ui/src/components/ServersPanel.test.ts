import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ServersPanel, { eraLabel, lastError, modelNameLabel, modelNameNote, statusLabel } from "./ServersPanel";
import css from "../styles.css?raw";
import type { ServerSnapshot, ToolCatalogView, ToolInfo } from "../ipc";
import { computeAccessibleName } from "dom-accessibility-api";
import { mount, press, withStyles } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const server = (id: string, status: ServerSnapshot["status"], protocolVersion: string | null): ServerSnapshot => ({
  id,
  name: id.toUpperCase(),
  enabled: true,
  status,
  implementation: null,
  protocolVersion,
  tools: [],
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
});

describe("servers panel labels", () => {
  it("says how the model sees a tool, or why it does not", () => {
    expect(modelNameLabel({ state: "visible", modelName: "left__write_file" })).toBe(
      "model sees: left__write_file",
    );
    expect(modelNameLabel({ state: "hidden", reason: { kind: "excluded", pattern: "write_*" } })).toBe(
      "hidden: excluded by write_*",
    );
    expect(modelNameLabel({ state: "hidden", reason: { kind: "disabledByUser" } })).toBe("hidden: turned off");
    expect(modelNameLabel(undefined)).toBe("not offered (server not ready)");
  });

  it("says the model's name of a tool only when it differs, with room between checkbox and name", () => {
    expect(modelNameNote({ state: "visible", modelName: "echo" }, "echo")).toBeNull();
    expect(modelNameNote({ state: "visible", modelName: "everything__echo" }, "echo")).toBe(
      "model sees: everything__echo",
    );
    expect(modelNameNote({ state: "hidden", reason: { kind: "disabledByUser" } }, "echo")).toBe("hidden: turned off");
    expect(css).toMatch(/\.tools li \{[^}]*gap:/);
  });

  it("explains a restart", () => {
    expect(
      statusLabel({ state: "restarting", attempt: 2, retryInMs: 2000, reason: "it exited with code 3" }),
    ).toBe("restarting (attempt 2) after: it exited with code 3");
  });

  it("says each server's era and its last error in one line", () => {
    expect(eraLabel("2026-07-28")).toBe("2026-07-28 (discover)");
    expect(eraLabel("2025-11-25")).toBe("2025-11-25 (initialize)");
    expect(eraLabel(null)).toBeNull();
    expect(lastError({ state: "failed", reason: "\nit exited with code 1\nTraceback…" })).toBe("it exited with code 1");
    expect(lastError({ state: "ready" })).toBeNull();
  });

  it("lists the servers at a glance; the arrows choose the one shown beside the list", async () => {
    mockIPC(() => []);
    const servers = [
      server("time", { state: "ready" }, "2026-07-28"),
      server("broken", { state: "failed", reason: "exited with code 1" }, null),
      server("files", { state: "starting" }, null),
    ];
    const app = await mount(createElement(ServersPanel, { servers, catalog: null }));
    const row = (id: string) => document.querySelector(`[data-testid=server-row-${id}]`) as HTMLElement;
    const list = document.querySelector("[role=listbox]") as HTMLElement;
    expect(list.getAttribute("aria-label")).toBe("Servers");
    expect(row("time").textContent).toContain("MCP 2026-07-28 (discover)");
    expect(row("broken").querySelector("[data-testid=server-row-error]")?.textContent).toBe("exited with code 1");
    expect(row("time").getAttribute("aria-selected")).toBe("true");
    expect(document.querySelector("[data-testid=server-time]")).not.toBeNull();
    // One tab stop in the list; the arrows, Home and End move the choice.
    expect(["time", "broken", "files"].map((id) => row(id).tabIndex)).toEqual([0, -1, -1]);
    await press(row("time"), "ArrowDown");
    expect(row("broken").getAttribute("aria-selected")).toBe("true");
    expect(document.activeElement).toBe(row("broken"));
    expect(document.querySelector("[data-testid=server-broken] [data-testid=server-status]")?.textContent).toBe(
      "failed: exited with code 1",
    );
    await press(row("broken"), "End");
    expect(document.querySelector("[data-testid=server-files]")).not.toBeNull();
    await press(row("files"), "Home");
    expect(row("time").getAttribute("aria-selected")).toBe("true");
    app.unmount();
  });

  it("shows a tool's model name only when it differs, its name as code, with room after its checkbox", async () => {
    mockIPC(() => []);
    const tool = (name: string): ToolInfo => ({
      name,
      title: null,
      description: `The ${name} tool.`,
      inputSchema: { type: "object" },
      outputSchema: null,
      readOnly: false,
      destructive: false,
      idempotent: false,
      openWorld: false,
    });
    const everything = { ...server("everything", { state: "ready" }, null), tools: [tool("echo"), tool("delete")] };
    const catalog: ToolCatalogView = {
      tools: [
        ["echo", "echo"],
        ["delete", "ev__delete"],
      ].map(([name, modelName]) => ({
        serverId: "everything",
        serverName: "Everything",
        tool: { name, description: `The ${name} tool.`, inputSchema: {}, annotations: {} },
        state: { state: "visible", modelName },
      })),
      budget: null,
      problem: null,
    };
    const unstyle = withStyles();
    const app = await mount(createElement(ServersPanel, { servers: [everything], catalog }));
    const line = (name: string) => app.host.querySelector(`[data-testid=tool-${name}]`)?.closest("li") as HTMLElement;
    // Not "(model sees: echo)" beside echo; said only where the model's name is another.
    expect(line("echo").querySelector("[data-testid=model-name-echo]")).toBeNull();
    expect(line("echo").textContent).not.toContain("model sees");
    expect(line("delete").querySelector("[data-testid=model-name-delete]")?.textContent).toBe("(model sees: ev__delete)");
    // The checkbox and the name do not touch: the line's items have a gap between them.
    const checkbox = line("echo").querySelector("[data-testid=tool-toggle-echo]") as HTMLInputElement;
    expect(checkbox.nextElementSibling).toBe(app.host.querySelector("[data-testid=tool-echo]"));
    expect(getComputedStyle(line("echo")).display).toBe("flex");
    const [rowGap, columnGap = rowGap] = getComputedStyle(line("echo")).getPropertyValue("gap").split(" ");
    expect(parseInt(columnGap, 10)).toBeGreaterThanOrEqual(6);
    // A tool's name is an id, in monospace; the words around it are in the UI's font.
    expect(getComputedStyle(app.host.querySelector("[data-testid=tool-echo]") as HTMLElement).fontFamily).toMatch(
      /monospace/,
    );
    app.unmount();
    unstyle();
  });

  it("puts the screen's icon on its heading and each action's icon on its button, hidden from screen readers", async () => {
    mockIPC(() => []);
    const app = await mount(createElement(ServersPanel, { servers: [server("time", { state: "ready" }, null)], catalog: null }));
    const heading = app.host.querySelector(".screen-header h2") as HTMLElement;
    expect(heading.textContent).toBe("Servers");
    expect(heading.querySelector("svg")?.getAttribute("class")).toContain("lucide-server");
    const add = app.host.querySelector("[data-testid=add-server-button]") as HTMLElement;
    const restart = app.host.querySelector("[aria-label='Restart TIME']") as HTMLElement;
    expect(add.querySelector("svg")?.getAttribute("class")).toContain("lucide-plus");
    expect(restart.querySelector("svg")?.getAttribute("class")).toContain("lucide-rotate-cw");
    for (const icon of [heading, add, restart].map((e) => e.querySelector("svg"))) {
      expect(icon?.getAttribute("aria-hidden")).toBe("true");
      expect(icon?.getAttribute("width")).toBe("16");
    }
    expect(computeAccessibleName(add)).toBe("Add server");
    app.unmount();
  });
});
