// A server's sandbox on its card: its warnings are on the card itself (an alert, not folded
// away), the header says how confined it is, and the controls send what the user chose; marks
// the user did not touch stay as stored.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import SandboxPanel, { sandboxBadge } from "./SandboxPanel";
import type { SandboxReport, ServerConfig, ServerSnapshot } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const report: SandboxReport = {
  enabled: true,
  network: "none",
  writable: ["/home/u/notes"],
  readable: ["/home/u/.nvm"],
  dataDir: "/home/u/.local/share/dev.toolgate.desktop/servers/files",
  warnings: [],
  defaults: true,
  mechanism: "Landlock and seccomp",
};

const server = (sandbox: SandboxReport | null): ServerSnapshot => ({
  id: "files",
  name: "Files",
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: null,
  tools: [],
  resources: [],
  prompts: [],
  roots: ["/home/u/notes"],
  sandbox,
  readsUntrusted: false,
  sendsOut: false,
  reviewResults: [],
  signedIn: null,
  needsScope: null,
  refusedTools: [],
  resourceTemplates: [],
});

const stored: ServerConfig = {
  id: "files",
  name: "Files",
  enabled: true,
  startupTimeoutSecs: 60,
  callTimeoutSecs: 60,
  maxCallTimeoutSecs: 600,
  autoRestart: true,
  transport: "stdio",
  command: "npx",
  args: [],
  env: {},
  cwd: null,
  sandbox: { enabled: true, network: "none", read: ["/opt/data"] },
  trust: { sendsOut: false },
};

function backend(locks: Record<string, unknown> = {}) {
  const calls: { cmd: string; args: unknown }[] = [];
  mockIPC((cmd, args) => {
    calls.push({ cmd, args });
    if (cmd === "server_config") return stored;
    if (cmd === "managed_policy") return { active: Object.keys(locks).length > 0, locks, rules: [] };
    if (cmd === "set_server_sandbox") return "files was restarted: a sandbox applies from a start";
    return null;
  });
  return calls;
}

/** Opens the folded section, which reads the stored settings. */
async function open(host: HTMLElement) {
  await click(host.querySelector("[data-testid=sandbox] summary"));
  await settle(10);
}

describe("a server's sandbox", () => {
  it("says how confined it is in a word", () => {
    expect(sandboxBadge(report)).toEqual({ text: "sandboxed · network none", tone: "ok" });
    expect(sandboxBadge({ ...report, warnings: ["files are not confined"] })?.tone).toBe("warning");
    expect(sandboxBadge({ ...report, enabled: false })?.text).toBe("unconfined");
    expect(sandboxBadge(null)).toBeNull();
  });

  it("shows what the kernel cannot enforce on the card, as an alert", async () => {
    backend();
    const gap = "files are not confined: this kernel has no Landlock";
    const app = await mount(createElement(SandboxPanel, { server: server({ ...report, warnings: [gap] }) }));
    const alert = app.host.querySelector("[data-testid=sandbox-warnings]") as HTMLElement;
    expect(alert.getAttribute("role")).toBe("alert");
    expect(alert.textContent).toBe(gap);
    // Outside the folded details: visible without opening anything.
    expect(alert.closest("details")).toBeNull();
    app.unmount();
  });

  it("never says plainly “on” while something is not enforced (running as root, say)", async () => {
    backend();
    // The backend's card and Diagnostics share one list of gaps; running as root is one of them.
    const root = "Toolgate runs as root, whose capabilities let a confined server read other processes' environments (where secrets are)";
    const app = await mount(createElement(SandboxPanel, { server: server({ ...report, warnings: [root] }) }));
    expect(sandboxBadge({ ...report, warnings: [root] })).toEqual({ text: "sandbox: not fully enforced", tone: "warning" });
    const summary = app.host.querySelector("[data-testid=sandbox] summary")?.textContent;
    expect(summary).toContain("not fully enforced");
    expect(app.host.querySelector("[data-testid=sandbox-warnings]")?.textContent).toContain("runs as root");
    app.unmount();
  });

  it("saves the sandbox the user chose and says the server restarted", async () => {
    const calls = backend();
    const app = await mount(createElement(SandboxPanel, { server: server(report) }));
    expect(calls.some((c) => c.cmd === "server_config")).toBe(false);
    await open(app.host);
    const read = app.host.querySelector("#sandbox-read-files") as HTMLTextAreaElement;
    expect(read.value).toBe("/opt/data");
    const select = app.host.querySelector("[data-testid=sandbox-network]") as HTMLSelectElement;
    await act(async () => {
      select.value = "loopback";
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await type(app.host.querySelector("#sandbox-write-files") as HTMLTextAreaElement, "/home/u/out\n\n");
    await click(app.host.querySelector("[data-testid=save-sandbox]"));
    await settle();
    expect(calls.find((c) => c.cmd === "set_server_sandbox")?.args).toEqual({
      serverId: "files",
      sandbox: {
        enabled: true,
        network: "loopback",
        read: ["/opt/data"],
        write: ["/home/u/out"],
        hosts: [],
        privateAddresses: false,
      },
    });
    expect(app.host.querySelector("[data-testid=sandbox-notice]")?.textContent).toContain("restarted");
    await click(app.host.querySelector("[data-testid=sandbox-defaults]"));
    await settle();
    expect(calls.filter((c) => c.cmd === "set_server_sandbox").at(-1)?.args).toEqual({
      serverId: "files",
      sandbox: null,
    });
    app.unmount();
  });

  it("lists the hosts a server in network hosts may reach", async () => {
    const calls = backend();
    const app = await mount(createElement(SandboxPanel, { server: server(report) }));
    await open(app.host);
    expect(app.host.querySelector("[data-testid=sandbox-hosts]")).toBeNull();
    const select = app.host.querySelector("[data-testid=sandbox-network]") as HTMLSelectElement;
    await act(async () => {
      select.value = "hosts";
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await type(app.host.querySelector("[data-testid=sandbox-hosts]") as HTMLTextAreaElement, "api.github.com\n*.notion.so\n");
    await click(app.host.querySelector("[data-testid=save-sandbox]"));
    await settle();
    expect(calls.find((c) => c.cmd === "set_server_sandbox")?.args).toMatchObject({
      sandbox: { network: "hosts", hosts: ["api.github.com", "*.notion.so"], privateAddresses: false },
    });
    app.unmount();
  });

  it("marks results as untrusted and for review, keeping the marks not touched", async () => {
    const calls = backend();
    const app = await mount(createElement(SandboxPanel, { server: server(report) }));
    await open(app.host);
    await click(app.host.querySelector("[data-testid=trust-untrusted]"));
    await type(app.host.querySelector("[data-testid=review-tools]") as HTMLInputElement, "read_file, search");
    await click(app.host.querySelector("[data-testid=save-trust]"));
    await settle();
    expect(calls.find((c) => c.cmd === "set_server_trust")?.args).toEqual({
      serverId: "files",
      trust: {
        readsUntrusted: true,
        sendsOut: false,
        reviewResults: ["read_file", "search"],
        acceptToolChanges: false,
        scanSecrets: null,
      },
    });
    // Its tools' changes accepted without a look: off unless the user says so.
    await click(app.host.querySelector("[data-testid=trust-accept-changes]"));
    await click(app.host.querySelector("[data-testid=save-trust]"));
    await settle();
    // And secrets no longer looked for in its calls: saved as an explicit off.
    await click(app.host.querySelector("[data-testid=trust-scan-secrets]"));
    await click(app.host.querySelector("[data-testid=save-trust]"));
    await settle();
    const last = calls.filter((c) => c.cmd === "set_server_trust").at(-1)?.args as {
      trust: { acceptToolChanges: boolean; scanSecrets: boolean | null };
    };
    expect(last.trust.acceptToolChanges).toBe(true);
    expect(last.trust.scanSecrets).toBe(false);
    app.unmount();
  });

  it("shows what the organisation locks as disabled and says so", async () => {
    backend({ sandbox: true, networkAtMost: "loopback" });
    const app = await mount(createElement(SandboxPanel, { server: server(report) }));
    await open(app.host);
    const confine = app.host.querySelector("[data-testid=sandbox-enabled]") as HTMLInputElement;
    expect(confine.checked).toBe(true);
    expect(confine.disabled).toBe(true);
    expect(app.host.querySelector("[data-testid=sandbox-locked]")?.textContent).toBe("Set by your organisation");
    const any = app.host.querySelector("[data-testid=sandbox-network] option[value=any]") as HTMLOptionElement;
    expect(any.disabled).toBe(true);
    expect(any.textContent).toContain("not allowed by your organisation");
    const loopback = app.host.querySelector("[data-testid=sandbox-network] option[value=loopback]") as HTMLOptionElement;
    expect(loopback.disabled).toBe(false);
    app.unmount();
  });

  it("leaves every control to the user without a managed policy", async () => {
    backend();
    const app = await mount(createElement(SandboxPanel, { server: server(report) }));
    await open(app.host);
    expect((app.host.querySelector("[data-testid=sandbox-enabled]") as HTMLInputElement).disabled).toBe(false);
    expect(app.host.querySelector("[data-testid=sandbox-locked]")).toBeNull();
    app.unmount();
  });

  it("has no sandbox controls for a remote server, only the gate's marks", async () => {
    backend();
    const app = await mount(createElement(SandboxPanel, { server: server(null) }));
    expect(app.host.querySelector("[data-testid=save-sandbox]")).toBeNull();
    expect(app.host.querySelector("[data-testid=save-trust]")).not.toBeNull();
    app.unmount();
  });
});
