// The Provider screen's form: switching format brings that format's default model, "Custom"
// clears the address for one to be typed, and listing models asks the provider the form
// describes (not the saved one), then shows the list.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ProviderPanel from "./ProviderPanel";
import type { PresetView, ProviderView } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const saved: ProviderView = {
  kind: "anthropic",
  baseUrl: "https://api.anthropic.com",
  model: "claude-sonnet-4-5",
  keySet: false,
  keySource: null,
  keyHint: null,
  keyEnvVar: "ANTHROPIC_API_KEY",
  keyError: null,
  keyNeeded: true,
};

const presets: PresetView[] = [
  { id: "anthropic", name: "Anthropic", kind: "anthropic", baseUrl: "https://api.anthropic.com", needsKey: true },
  { id: "openai", name: "OpenAI", kind: "openai", baseUrl: "https://api.openai.com/v1", needsKey: true },
  { id: "lmstudio", name: "LM Studio", kind: "openai", baseUrl: "http://localhost:1234/v1", needsKey: false },
];

async function panel(models: (provider: unknown) => string[]) {
  const asked: { cmd: string; args: unknown }[] = [];
  mockIPC((cmd, args) => {
    asked.push({ cmd, args });
    if (cmd === "provider_presets") return presets;
    if (cmd === "list_models_for") return models((args as { provider: unknown }).provider);
    if (cmd === "list_models") throw { kind: "provider", message: "no key for https://api.anthropic.com" };
  });
  const app = await mount(createElement(ProviderPanel, { provider: saved, onChange: () => undefined }));
  const field = (id: string) => app.host.querySelector(`#${id}`) as HTMLInputElement & HTMLSelectElement;
  const choose = async (select: HTMLSelectElement, value: string) => {
    await act(async () => {
      select.value = value;
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
  };
  return { app, asked, field, choose };
}

describe("the provider form", () => {
  it("brings the format's default model when the format changes", async () => {
    const { app, field, choose } = await panel(() => []);
    await choose(field("provider-kind"), "openai");
    expect(field("provider-model").value).toBe("gpt-4.1");
    expect(field("provider-base-url").value).toBe("https://api.openai.com/v1");
    await choose(field("provider-kind"), "anthropic");
    expect(field("provider-model").value).toBe("claude-sonnet-4-5");
    // A model the user typed is theirs: kept.
    await type(field("provider-model"), "my-model");
    await choose(field("provider-kind"), "openai");
    expect(field("provider-model").value).toBe("my-model");
    app.unmount();
  });

  it("makes Custom an address to type, with the field focused and a hint", async () => {
    const { app, field, choose } = await panel(() => []);
    await choose(field("provider-preset"), "");
    expect(field("provider-kind").value).toBe("openai");
    expect(field("provider-base-url").value).toBe("");
    expect(document.activeElement).toBe(field("provider-base-url"));
    expect(app.host.querySelector("[data-testid=provider-custom-hint]")).not.toBeNull();
    expect(field("provider-preset").value).toBe("");
    app.unmount();
  });

  it("lists the models of the provider in the form, before it is saved, and shows them", async () => {
    const { app, asked, field, choose } = await panel(() => ["qwen3-8b"]);
    await choose(field("provider-preset"), "lmstudio");
    await click(app.host.querySelector("[data-testid=load-models]"));
    await settle();
    expect(asked.filter((a) => a.cmd.startsWith("list_models"))).toEqual([
      { cmd: "list_models_for", args: { provider: { kind: "openai", baseUrl: "http://localhost:1234/v1", model: "" } } },
    ]);
    expect(app.host.querySelector("[role=status]")?.textContent).toBe(
      "1 model offered: pick one below, or type its name.",
    );
    const list = app.host.querySelector("[data-testid=provider-models]") as HTMLElement;
    const buttons = [...list.querySelectorAll("button")];
    expect(buttons.map((b) => b.textContent)).toEqual(["qwen3-8b"]);
    await click(buttons[0]);
    expect(field("provider-model").value).toBe("qwen3-8b");
    expect(buttons[0].getAttribute("aria-pressed")).toBe("true");
    app.unmount();
  });
});
