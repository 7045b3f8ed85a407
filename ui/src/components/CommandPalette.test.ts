// The command palette: in jsdom alone (filtering, the keyboard, a second list, focus), and in the
// whole window against Tauri's IPC mock (Ctrl+K, going to a screen, switching the model).
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { computeAccessibleName } from "dom-accessibility-api";
import App from "../App";
import CommandPalette, { filterCommands, type PaletteCommand } from "./CommandPalette";
import { resetUiState } from "../uiState";
import { click, mount, press, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  resetUiState();
  document.body.innerHTML = "";
});

const options = () => [...document.querySelectorAll("[role=option]")].map((o) => o.textContent);
const input = () => document.querySelector("[data-testid=palette-input]") as HTMLInputElement;

describe("the command palette", () => {
  it("keeps the commands with every typed word, in their order", () => {
    const commands: PaletteCommand[] = [
      { id: "a", label: "New chat" },
      { id: "b", group: "Go to", label: "Activity" },
      { id: "c", group: "Server", label: "Restart Everything" },
    ];
    expect(filterCommands(commands, "").map((c) => c.id)).toEqual(["a", "b", "c"]);
    expect(filterCommands(commands, "go act").map((c) => c.id)).toEqual(["b"]);
    expect(filterCommands(commands, "EVERY restart").map((c) => c.id)).toEqual(["c"]);
    expect(filterCommands(commands, "nothing")).toEqual([]);
  });

  it("runs the chosen command from the keyboard, opens a second list, and gives focus back", async () => {
    const ran: string[] = [];
    let open = true;
    const before = document.createElement("button");
    document.body.append(before);
    before.focus();
    const commands: PaletteCommand[] = [
      { id: "new", label: "New chat", shortcut: "Ctrl+N", run: () => ran.push("new") },
      { id: "pause", label: "Pause all tools", run: () => ran.push("pause") },
      {
        id: "model",
        label: "Switch model",
        then: {
          title: "Switch model",
          placeholder: "Model",
          load: async () => [{ id: "m1", label: "Use claude-a", run: () => ran.push("claude-a") }],
          custom: (typed) => (typed ? { id: `typed-${typed}`, label: `Use ${typed}`, run: () => ran.push(typed) } : null),
        },
      },
    ];
    const view = () => createElement(CommandPalette, { open, onClose: () => (open = false), commands });
    const app = await mount(view());
    const dialog = document.querySelector("[role=dialog]") as HTMLElement;
    expect(computeAccessibleName(dialog)).toBe("Command palette");
    expect(document.activeElement).toBe(input());
    expect(input().getAttribute("aria-activedescendant")).toBe("palette-option-0");

    await type(input(), "pause");
    expect(options()).toEqual(["Pause all tools"]);
    await press(input(), "Enter");
    expect(ran).toEqual(["pause"]);
    expect(open).toBe(false);

    // Reopened: the arrows move, and a command with a second list opens it.
    await act(async () => app.root.render(view()));
    open = true;
    await act(async () => app.root.render(view()));
    await type(input(), "");
    await press(input(), "ArrowDown");
    await press(input(), "ArrowDown");
    expect(document.querySelector("[aria-selected=true]")?.textContent).toContain("Switch model");
    await press(input(), "Enter");
    await settle();
    expect(computeAccessibleName(document.querySelector("[role=dialog]") as HTMLElement)).toBe("Switch model");
    expect(options()).toEqual(["Use claude-a"]);
    // What is typed can be used as it is.
    await type(input(), "gpt-x");
    expect(options()).toEqual(["Use gpt-x"]);
    await press(input(), "Enter");
    expect(ran).toEqual(["pause", "gpt-x"]);

    // Escape leaves a second list first, then closes; focus goes back where it was.
    await act(async () => app.root.render(view()));
    open = true;
    await act(async () => app.root.render(view()));
    await click(document.querySelector("[data-testid=palette-model]"));
    await settle();
    await press(input(), "Escape");
    expect(open).toBe(true);
    expect(options()).toContain("Switch model …");
    await press(input(), "Escape");
    expect(open).toBe(false);
    await act(async () => app.root.render(view()));
    expect(document.querySelector("[role=dialog]")).toBeNull();
    expect(document.activeElement).toBe(before);
    app.unmount();
  });

  it("opens with Ctrl+K over the whole window, goes to a screen and switches the model", async () => {
    const seen: { cmd: string; args: unknown }[] = [];
    mockIPC(
      (cmd, args) => {
        seen.push({ cmd, args });
        switch (cmd) {
          case "list_servers":
            return [];
          case "tool_catalog":
            return { tools: [], budget: null, problem: null };
          case "get_provider":
          case "set_provider":
            return {
              kind: "openai",
              baseUrl: "http://127.0.0.1:11434/v1",
              model: (args as { provider?: { model: string } }).provider?.model ?? "llama3.2",
              keySet: false,
              keySource: null,
              keyHint: null,
              keyEnvVar: "OPENAI_API_KEY",
              keyError: null,
              keyNeeded: false,
            };
          case "list_models":
            return ["llama3.2", "qwen3"];
          case "pending_approvals":
          case "startup_notices":
          case "list_conversations":
            return [];
          case "approval_rules":
            return { paused: false, autoAllowReadOnly: false, default: "ask", rules: [] };
          case "audit_log":
            return [];
        }
      },
      { shouldMockEvents: true },
    );
    const app = await mount(createElement(App));
    await press(document.getElementById("chat-input"), "k", { ctrlKey: true });
    await type(input(), "go activity");
    await press(input(), "Enter");
    expect(document.getElementById("tab-activity")?.getAttribute("aria-selected")).toBe("true");
    expect(document.querySelector("[data-testid=command-palette]")).toBeNull();

    await click(document.querySelector("[data-testid=open-palette]"));
    await type(input(), "switch model");
    await press(input(), "Enter");
    await settle();
    expect(options()).toEqual(["llama3.2 (in use)", "Use qwen3"]);
    await type(input(), "qwen");
    await press(input(), "Enter");
    await settle();
    expect(seen.filter((c) => c.cmd === "set_provider").map((c) => c.args)).toEqual([
      { provider: { kind: "openai", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen3" } },
    ]);
    expect(document.querySelector("[data-testid=model-picker] summary")?.textContent).toBe("Model: qwen3");
    app.unmount();
  });
});
