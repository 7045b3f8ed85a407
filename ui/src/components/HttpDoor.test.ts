// The HTTP door's card, rendered by React in jsdom against Tauri's IPC mock: the switch and the
// address go to `set_door` as chosen, a token is shown once when issued (and gone when dismissed
// or revoked), clients are revoked by name, and the backend's refusal is shown as it said it.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import HttpDoor from "./HttpDoor";
import type { DoorView } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => clearMocks());

describe("the HTTP door", () => {
  it("switches on, issues a token shown once, and revokes it", async () => {
    let view: DoorView = {
      enabled: false,
      address: "127.0.0.1:8787",
      url: "http://127.0.0.1:8787/mcp",
      listening: false,
      problem: null,
      clients: [],
    };
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      const a = args as Record<string, unknown>;
      if (cmd === "door_status") return view;
      if (cmd === "set_door") {
        view = {
          ...view,
          enabled: a.enabled as boolean,
          address: a.address as string,
          url: `http://${a.address as string}/mcp`,
          listening: a.enabled as boolean,
        };
        return view;
      }
      if (cmd === "add_door_token") {
        view = { ...view, clients: [...view.clients, a.name as string] };
        return { name: a.name, token: "tgd_secret", url: view.url };
      }
      if (cmd === "revoke_door_token") {
        view = { ...view, clients: view.clients.filter((c) => c !== a.name) };
        return view;
      }
    });
    const { host, unmount } = await mount(createElement(HttpDoor));
    expect(host.querySelector("[data-testid=door-state]")?.textContent).toBe("Closed.");

    await type(host.querySelector("[data-testid=door-address]") as HTMLInputElement, "127.0.0.1:9000");
    await click(host.querySelector("[data-testid=door-enabled]"));
    await settle();
    expect(calls.find((c) => c.cmd === "set_door")?.args).toEqual({ enabled: true, address: "127.0.0.1:9000" });
    expect(host.querySelector("[data-testid=door-state]")?.textContent).toContain("http://127.0.0.1:9000/mcp");

    await type(host.querySelector("[data-testid=door-client-name]") as HTMLInputElement, " claude-web ");
    await click(host.querySelector("[data-testid=door-issue]"));
    await settle();
    expect(calls.find((c) => c.cmd === "add_door_token")?.args).toEqual({ name: "claude-web" });
    expect((host.querySelector("[data-testid=door-token]") as HTMLInputElement).value).toBe("tgd_secret");
    expect(host.querySelector("[data-testid=door-client-claude-web]")).not.toBeNull();

    await click(host.querySelector("[aria-label='Revoke the token of claude-web']"));
    await settle();
    expect(calls.find((c) => c.cmd === "revoke_door_token")?.args).toEqual({ name: "claude-web" });
    expect(host.querySelector("[data-testid=door-token]")).toBeNull();
    expect(host.textContent).not.toContain("tgd_secret");
    unmount();
  });

  it("shows why the backend refused, and why the door is not listening", async () => {
    mockIPC((cmd) => {
      if (cmd === "door_status") {
        return {
          enabled: true,
          address: "127.0.0.1:8787",
          url: "http://127.0.0.1:8787/mcp",
          listening: false,
          problem: "could not open the HTTP door at 127.0.0.1:8787: Address in use",
          clients: ["ci"],
        };
      }
      if (cmd === "set_door") {
        throw { kind: "door", message: "0.0.0.0:80 is not a loopback address" };
      }
    });
    const { host, unmount } = await mount(createElement(HttpDoor));
    expect(host.querySelector("[data-testid=door-problem]")?.textContent).toContain("Address in use");
    await type(host.querySelector("[data-testid=door-address]") as HTMLInputElement, "0.0.0.0:80");
    await click(host.querySelector("[data-testid=door-save-address]"));
    await settle();
    expect(host.querySelector("[data-testid=door-error]")?.textContent).toContain("not a loopback address");
    unmount();
  });
});
