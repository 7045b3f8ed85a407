// Add server → From a registry, in jsdom against Tauri's IPC mock: a search pages by the
// registry's cursor, a chosen server shows what it will run (pinned) before it is added, its
// secret is asked as a password, and the add sends exactly the answers given.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import RegistryTab from "./RegistryTab";
import type { Listing, Plan } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const listing = (name: string, extra: Partial<Listing> = {}): Listing => ({
  name,
  title: null,
  description: `${name} does things`,
  version: "1.0.0",
  kinds: ["npm"],
  deprecated: null,
  ...extra,
});

const plan: Plan = {
  name: "io.github.modelcontextprotocol/time",
  version: "2026.10.19",
  suggestedId: "time",
  runs: "uvx mcp-server-time==2026.10.19",
  asks: [
    {
      key: "env:TIME_API_TOKEN",
      label: "TIME_API_TOKEN",
      description: "Token",
      secret: true,
      required: false,
      default: null,
      choices: [],
    },
    { key: "env:TZ", label: "TZ", description: null, secret: false, required: false, default: "UTC", choices: ["UTC", "Asia/Tokyo"] },
  ],
  warning: null,
};

describe("servers from a registry", () => {
  it("pages by cursor, shows what will run, and adds with the answers given", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "registry_search") {
        const cursor = (args as { cursor: string | null }).cursor;
        return cursor
          ? { servers: [listing("io.github.modelcontextprotocol/time", { kinds: ["pypi"] })], nextCursor: null }
          : {
              servers: [listing("a/one"), listing("b/two", { deprecated: "use three" })],
              nextCursor: "c1",
            };
      }
      if (cmd === "registry_plan") return plan;
      return null;
    });
    let added: string | null = null;
    const app = await mount(createElement(RegistryTab, { onAdded: (id: string) => (added = id) }));
    await type(app.host.querySelector("[data-testid=registry-query]") as HTMLInputElement, "ti");
    await click(app.host.querySelector("[data-testid=registry-search]"));
    await settle();
    expect(app.host.querySelectorAll("[data-testid=registry-result]").length).toBe(2);
    expect(app.host.textContent).toContain("Deprecated: use three");
    await click(app.host.querySelector("[data-testid=registry-more]"));
    await settle();
    const results = [...app.host.querySelectorAll("[data-testid=registry-result]")];
    expect(results.length).toBe(3);
    expect(calls.filter((c) => c.cmd === "registry_search").map((c) => c.args)).toEqual([
      { search: "ti", cursor: null },
      { search: "ti", cursor: "c1" },
    ]);
    expect(app.host.querySelector("[data-testid=registry-more]")).toBeNull();

    await click(results[2].querySelector("button"));
    await settle();
    expect(app.host.querySelector("[data-testid=registry-runs]")?.textContent).toBe("uvx mcp-server-time==2026.10.19");
    const token = app.host.querySelector("[data-testid='ask-env:TIME_API_TOKEN']") as HTMLInputElement;
    expect(token.type).toBe("password");
    await type(token, "tok");
    await click(app.host.querySelector("[data-testid=registry-add]"));
    await settle();
    expect(calls.find((c) => c.cmd === "add_from_registry")?.args).toEqual({
      name: "io.github.modelcontextprotocol/time",
      version: "2026.10.19",
      id: "time",
      answers: { "env:TIME_API_TOKEN": "tok", "env:TZ": "UTC" },
    });
    expect(added).toBe("time");
    app.unmount();
  });

  it("says why when the registry cannot be reached", async () => {
    mockIPC((cmd) => {
      if (cmd === "registry_search")
        throw { kind: "registry", message: "the registry could not be reached (offline); the well-known servers are still offered under Add server" };
    });
    let offline = 0;
    const app = await mount(createElement(RegistryTab, { onAdded: () => undefined, onOffline: () => offline++ }));
    await click(app.host.querySelector("[data-testid=registry-search]"));
    await settle();
    expect(app.host.querySelector("[data-testid=registry-problem]")?.textContent).toContain("well-known servers");
    // The offline fallback is one click away.
    await click(app.host.querySelector("[data-testid=registry-offline]"));
    expect(offline).toBe(1);
    app.unmount();
  });
});
