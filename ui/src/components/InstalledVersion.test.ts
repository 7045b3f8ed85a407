// The version Toolgate installed, on the card: a newer one is offered only after asking, and
// installed only on a click; keeping the old one sends nothing.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import InstalledVersion from "./InstalledVersion";
import type { ServerSnapshot } from "../ipc";
import { click, mount, settle } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const server = {
  id: "memory",
  name: "memory",
  installed: { package: "@modelcontextprotocol/server-memory", version: "2026.7.4", registry: "npm" },
} as unknown as ServerSnapshot;

describe("an installed server's version", () => {
  it("offers a newer version only when asked and installs it only on a click", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC((cmd, args) => {
      calls.push({ cmd, args });
      if (cmd === "package_version")
        return { server: "memory", package: "p", installed: "2026.7.4", available: "2026.8.31", problem: null };
      if (cmd === "update_package") return "2026.8.31";
      return null;
    });
    const app = await mount(createElement(InstalledVersion, { server }));
    expect(app.host.textContent).toContain("@modelcontextprotocol/server-memory 2026.7.4 from npm");
    expect(calls).toEqual([]);
    await click(app.host.querySelector("[data-testid=check-version]"));
    await settle();
    expect(app.host.textContent).toContain("2026.8.31 is available");
    expect(calls.map((c) => c.cmd)).toEqual(["package_version"]);
    await click(app.host.querySelector("[data-testid=keep-package]"));
    expect(app.host.querySelector("[data-testid=update-package]")).toBeNull();
    await click(app.host.querySelector("[data-testid=check-version]"));
    await settle();
    await click(app.host.querySelector("[data-testid=update-package]"));
    await settle();
    expect(calls.at(-1)).toEqual({ cmd: "update_package", args: { serverId: "memory", version: "2026.8.31" } });
    expect(app.host.textContent).toContain("now runs 2026.8.31");
    app.unmount();
  });

  it("shows nothing for a server Toolgate did not install", async () => {
    mockIPC(() => null);
    const app = await mount(createElement(InstalledVersion, { server: { id: "x", name: "x" } as unknown as ServerSnapshot }));
    expect(app.host.querySelector("[data-testid=installed-version]")).toBeNull();
    app.unmount();
  });
});
