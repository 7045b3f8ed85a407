// The chat header's Model ▾ and Servers ▾ menus behave as menus do: one open at a time, closed by
// Escape (focus back on the menu's button) and by a click outside.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ChatHeader from "./ChatHeader";
import type { ProviderView } from "../ipc";
import { click, mount, press, settle } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const provider: ProviderView = {
  kind: "openai",
  baseUrl: "http://localhost:1234/v1",
  model: "m1",
  keySet: true,
  keySource: "keychain",
  keyHint: null,
  keyEnvVar: "OPENAI_API_KEY",
  keyError: null,
  keyNeeded: false,
};

async function header(view: ProviderView = provider, onSetUp?: () => void) {
  mockIPC((cmd) => (cmd === "list_models" ? ["m1", "m2"] : null));
  const app = await mount(
    createElement(ChatHeader, {
      provider: view,
      onSetUp,
      servers: [],
      serversOff: [],
      onServersOff: () => undefined,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      cost: 0,
      unpriced: 0,
      busy: false,
    }),
  );
  const model = app.host.querySelector("[data-testid=model-picker]") as HTMLDetailsElement;
  const servers = app.host.querySelector("[data-testid=chat-servers]") as HTMLDetailsElement;
  const open = async (menu: HTMLDetailsElement) => {
    const summary = menu.querySelector("summary") as HTMLElement;
    await act(async () => {
      summary.dispatchEvent(new MouseEvent("pointerdown", { bubbles: true }));
      summary.dispatchEvent(new MouseEvent("mousedown", { bubbles: true }));
    });
    await click(summary);
    await settle();
  };
  return { app, model, servers, open };
}

describe("the chat header's menus", () => {
  it("keep only one open at a time", async () => {
    const { app, model, servers, open } = await header();
    await open(model);
    expect(model.open).toBe(true);
    await open(servers);
    expect(servers.open).toBe(true);
    expect(model.open).toBe(false);
    app.unmount();
  });

  it("close on Escape, with focus back on the menu's button", async () => {
    const { app, model, open } = await header();
    await open(model);
    const inside = model.querySelector("input") as HTMLInputElement;
    inside.focus();
    await press(inside, "Escape");
    await settle();
    expect(model.open).toBe(false);
    expect(document.activeElement).toBe(model.querySelector("summary"));
    app.unmount();
  });

  it("close on a click outside, and stay open on a click inside", async () => {
    const { app, model, servers, open } = await header();
    await open(servers);
    await act(async () => {
      servers.querySelector(".menu-body")?.dispatchEvent(new MouseEvent("mousedown", { bubbles: true }));
    });
    await settle();
    expect(servers.open).toBe(true);
    await act(async () => {
      document.body.dispatchEvent(new MouseEvent("mousedown", { bubbles: true }));
    });
    await settle();
    expect(servers.open).toBe(false);
    expect(model.open).toBe(false);
    app.unmount();
  });

  it("names no model before a provider can answer, and offers to set one up", async () => {
    let opened = false;
    const { app } = await header(
      { ...provider, kind: "anthropic", model: "claude-sonnet-4-5", keyNeeded: true, keySet: false },
      () => (opened = true),
    );
    expect(app.host.textContent).not.toContain("claude-sonnet-4-5");
    expect(app.host.querySelector("[data-testid=model-picker]")).toBeNull();
    await click(app.host.querySelector("[data-testid=model-set-up]"));
    expect(opened).toBe(true);
    app.unmount();
  });
});
