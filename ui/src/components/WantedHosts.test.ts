// A host a server in network "hosts" was refused: the card asks, and each button sends its
// answer for that host.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import WantedHosts from "./WantedHosts";
import type { ServerSnapshot } from "../ipc";
import { click, mount, settle } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const server = (wanted: string[]) =>
  ({ id: "fetch", name: "fetch", wantedHosts: wanted }) as unknown as ServerSnapshot;

describe("hosts a server wants to reach", () => {
  it("asks for each refused host and sends the answer", async () => {
    const sent: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "answer_host") sent.push(args);
      return null;
    });
    const app = await mount(createElement(WantedHosts, { server: server(["example.com", "<b>x</b>.test"]) }));
    const asked = app.host.querySelector("[data-testid=wanted-hosts]") as HTMLElement;
    expect(asked.textContent).toContain("fetch wants to reach example.com");
    // The server's words are text, never markup.
    expect(asked.querySelector("b")).toBeNull();
    await click(app.host.querySelector("[data-testid='host-once-example.com']"));
    await click(app.host.querySelector("[data-testid='host-always-example.com']"));
    await click(app.host.querySelector("[data-testid='host-deny-example.com']"));
    await settle();
    expect(sent).toEqual([
      { serverId: "fetch", host: "example.com", answer: "once" },
      { serverId: "fetch", host: "example.com", answer: "always" },
      { serverId: "fetch", host: "example.com", answer: "deny" },
    ]);
    app.unmount();
  });

  it("shows nothing when no host is waiting", async () => {
    mockIPC(() => null);
    const app = await mount(createElement(WantedHosts, { server: server([]) }));
    expect(app.host.querySelector("[data-testid=wanted-hosts]")).toBeNull();
    app.unmount();
  });
});
