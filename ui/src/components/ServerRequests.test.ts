// The panel of requests from outside a chat turn, rendered by React in jsdom against Tauri's IPC
// mock: it shows servers' own requests and connected hosts' calls, never the chat's, refreshes when the backend says the gate changed, and sends the
// typed answer to a question as the edited arguments.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import ServerRequests from "./ServerRequests";
import type { PendingCall } from "../ipc";
import { click, mount, press, type } from "../testing";

// React's act() needs to know it runs in a test.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

afterEach(() => clearMocks());

const base = {
  callId: "",
  serverId: "everything",
  serverName: "Everything",
  readOnly: false,
  destructive: false,
  inputSchema: {},
  reason: "",
  beyondRules: false,
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

  it("shows a page to open with its domain first, as text, and opens it only on the button", async () => {
    const page: PendingCall = {
      ...question,
      id: "u1",
      message: "Sign in to the example service",
      arguments: {},
      inputSchema: { type: "object" },
      reason: "Everything asks you to open a page on accounts.example.com.",
      link: { url: "https://accounts.example.com/signin?session=abc", domain: "accounts.example.com" },
    };
    const answers: unknown[] = [];
    mockIPC(
      (cmd, args) => {
        if (cmd === "pending_approvals") return [page];
        if (cmd === "answer_approval") answers.push(args);
      },
      { shouldMockEvents: true },
    );
    const { host, unmount } = await mount(createElement(ServerRequests));
    const card = host.querySelector("[data-testid=link-card]") as HTMLElement;
    expect(card.getAttribute("aria-label")).toBe("Everything asks you to open a page on accounts.example.com");
    expect(card.querySelector("[data-testid=link-domain]")?.textContent).toBe("accounts.example.com");
    expect(card.querySelector("[data-testid=link-url]")?.textContent).toBe(
      "https://accounts.example.com/signin?session=abc",
    );
    // Nothing on the card can navigate the window: no link, no form answer.
    expect(card.querySelector("a")).toBeNull();
    expect(card.querySelector("textarea")).toBeNull();
    expect(answers).toEqual([]);
    await click(card.querySelector("[data-testid=link-decline]"));
    await settle();
    await click(card.querySelector("[data-testid=link-open]"));
    await settle();
    expect(answers).toEqual([
      { id: "u1", decision: { decision: "deny", reason: null } },
      { id: "u1", decision: { decision: "approve" } },
    ]);
    unmount();
  });

  it("shows a connected host's tool call with its name, and no 'in this chat' answer", async () => {
    const fromClient: PendingCall = {
      ...toolCall,
      id: "c1",
      tool: "write_file",
      serverName: "Files",
      arguments: { path: "/home/u/notes/a.md", content: "hi" },
      client: "claude-code",
    };
    const answers: unknown[] = [];
    mockIPC(
      (cmd, args) => {
        if (cmd === "pending_approvals") return [toolCall, fromClient];
        if (cmd === "answer_approval") answers.push(args);
      },
      { shouldMockEvents: true },
    );
    const { host, unmount } = await mount(createElement(ServerRequests));
    const cards = host.querySelectorAll("[data-testid=approval-card]");
    expect(cards).toHaveLength(1);
    const card = cards[0] as HTMLElement;
    expect(card.getAttribute("aria-label")).toBe("claude-code wants to run write_file on Files");
    expect(card.querySelector("[data-testid=approval-client]")?.textContent).toBe("claude-code");
    // The full arguments are shown before anything runs.
    expect(card.textContent).toContain("/home/u/notes/a.md");
    expect(card.querySelector("[data-testid=allow-conversation]")).toBeNull();
    expect(card.querySelector("[data-testid=always-allow]")?.textContent).toBe("Always allow for claude-code");
    await click(card.querySelector("[data-testid=approve]"));
    await settle();
    expect(answers).toEqual([{ id: "c1", decision: { decision: "approve" } }]);
    unmount();
  });

  it("answers a question in fields generated from its schema, in step with the JSON answer", async () => {
    // The everything server's question, in part: the answer starts with the defaults.
    const form: PendingCall = {
      ...question,
      id: "q2",
      message: "Please provide inputs for the following fields:",
      arguments: { integer: 42, titledMultipleSelectEnum: ["fish-1"], legacyTitledEnum: "pet-1" },
      inputSchema: {
        type: "object",
        properties: {
          name: { title: "String", type: "string", description: "Your full, legal name" },
          check: { title: "Boolean", type: "boolean", description: "Agree to the terms and conditions" },
          email: { title: "String with email format", type: "string", format: "email" },
          integer: { title: "Integer", type: "integer", minimum: 1, maximum: 100, default: 42 },
          titledMultipleSelectEnum: {
            type: "array",
            title: "Titled Multiple Select Enum",
            items: {
              anyOf: [
                { const: "fish-1", title: "Tuna" },
                { const: "fish-2", title: "Salmon" },
                { const: "fish-3", title: "Trout" },
              ],
            },
            default: ["fish-1"],
          },
          legacyTitledEnum: {
            type: "string",
            title: "Legacy Titled Single Select Enum",
            enum: ["pet-1", "pet-2", "pet-3"],
            enumNames: ["Cats", "Dogs", "Birds"],
            default: "pet-1",
          },
        },
        required: ["name"],
      },
    };
    const answers: unknown[] = [];
    mockIPC(
      (cmd, args) => {
        if (cmd === "pending_approvals") return [form];
        if (cmd === "answer_approval") {
          const answer = (args as { decision: { arguments?: { integer?: number } } }).decision;
          // The backend checks the answer against the schema, and says what does not fit.
          if ((answer.arguments?.integer ?? 0) > 100) {
            throw { kind: "invalid", message: "/integer: 500 is greater than the maximum of 100" };
          }
          answers.push(args);
        }
      },
      { shouldMockEvents: true },
    );
    const host = document.createElement("div");
    document.body.append(host);
    const root = createRoot(host);
    await act(async () => root.render(createElement(ServerRequests)));
    await settle();

    const card = host.querySelector("[data-testid=server-requests] [data-testid=approval-card]") as HTMLElement;
    const fields = card.querySelector("[data-testid=schema-form]") as HTMLElement;
    const json = card.querySelector("[data-testid=edit-arguments]") as HTMLTextAreaElement;
    // The fields come first, the JSON answer (what is sent) after them.
    expect(fields.compareDocumentPosition(json) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    const byLabel = (text: string) => {
      const label = [...card.querySelectorAll("label")].find((l) => (l.textContent ?? "").startsWith(text));
      return (label?.htmlFor ? document.getElementById(label.htmlFor) : label?.querySelector("input")) as HTMLInputElement;
    };
    expect(byLabel("String name").getAttribute("aria-required")).toBe("true");
    expect(byLabel("String with email format").type).toBe("email");
    expect(byLabel("Integer").value).toBe("42");
    expect(byLabel("Tuna").checked).toBe(true);
    const pet = byLabel("Legacy Titled Single Select Enum") as unknown as HTMLSelectElement;
    expect(pet.selectedOptions[0].textContent).toBe("Cats");

    await type(byLabel("String name"), "Ada");
    await click(byLabel("Boolean"));
    await click(byLabel("Tuna"));
    await click(byLabel("Trout"));
    await act(async () => {
      pet.value = "1";
      pet.dispatchEvent(new Event("change", { bubbles: true }));
    });
    // Keys on the fields are typing, not the card's shortcuts: "d" on the choice does not decline.
    await press(pet, "d");
    expect(answers).toEqual([]);
    const expected = {
      integer: 42,
      titledMultipleSelectEnum: ["fish-3"],
      legacyTitledEnum: "pet-2",
      name: "Ada",
      check: true,
    };
    expect(JSON.parse(json.value)).toEqual(expected);

    // The backend's refusal shows, and the answer can be fixed and sent again.
    await type(byLabel("Integer"), "500");
    expect(JSON.parse(json.value).integer).toBe(500);
    await click(card.querySelector("[data-testid=approve-edited]"));
    await settle();
    expect(card.querySelector("[data-testid=approval-problem]")?.textContent).toBe(
      "/integer: 500 is greater than the maximum of 100",
    );
    // Typed into the JSON, the answer is sent exactly as typed, and the fields follow.
    await type(json, '{"name": "Ada from the window", "integer": 7}');
    expect(byLabel("String name").value).toBe("Ada from the window");
    expect(byLabel("Tuna").checked).toBe(false);
    await click(card.querySelector("[data-testid=approve-edited]"));
    await settle();
    expect(answers).toEqual([
      { id: "q2", decision: { decision: "approveEdited", arguments: { name: "Ada from the window", integer: 7 } } },
    ]);
    act(() => root.unmount());
  });
});
