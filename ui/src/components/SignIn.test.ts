// A remote server's sign-in on its card, in jsdom against Tauri's IPC mock: "Sign in required"
// with a button that starts the sign-in (the address shown while the browser is awaited),
// "Signed in (expires …)" with Sign out, "Sign in again", a request for more access granted only
// by a click, and tools the server offered that Toolgate refuses, with the reason.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ServersPanel from "./ServersPanel";
import { expiryLabel } from "./SignIn";
import type { ServerSnapshot } from "../ipc";
import { click, mount, settle } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

const base: ServerSnapshot = {
  id: "linear",
  name: "Linear",
  enabled: true,
  status: { state: "signIn", reason: "Linear asks you to sign in", again: false },
  implementation: null,
  protocolVersion: null,
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
};

function backend(calls: { cmd: string; args: unknown }[]) {
  mockIPC((cmd, args) => {
    if (cmd === "import_sources") return { claudeDesktop: null };
    if (cmd === "list_secrets") return [];
    if (cmd === "list_hosts") return [];
    if (cmd === "tool_settings") return { naming: "auto" };
    if (cmd === "sign_in_server" || cmd === "sign_out_server") {
      calls.push({ cmd, args });
      if (cmd === "sign_out_server") return ["the authorization server did not confirm the revocation"];
      return { issuer: "https://auth.example", expiresAt: null, renewable: true, scopes: ["mcp:tools"] };
    }
  });
}

describe("signing in to a remote server", () => {
  it("offers the sign-in, and signs in with the extra scopes only when asked", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    backend(calls);
    const { host } = await mount(createElement(ServersPanel, { servers: [base], catalog: null }));
    expect(host.querySelector("[data-testid=sign-in-state]")?.textContent).toContain("Sign in required");
    expect(host.querySelector("[data-testid=server-status]")?.textContent).toBe("sign in required");
    const button = host.querySelector("[data-testid=sign-in-button]") as HTMLButtonElement;
    expect(button.textContent).toBe("Sign in to Linear");
    // Its action's icon, hidden from screen readers.
    expect(button.querySelector("svg")?.getAttribute("class")).toContain("lucide-log-in");
    expect(button.querySelector("svg")?.getAttribute("aria-hidden")).toBe("true");
    await click(button);
    await settle();
    expect(calls).toHaveLength(1);
    const { serverId, extraScopes } = calls[0].args as { serverId: string; extraScopes: string[] };
    expect([calls[0].cmd, serverId, extraScopes]).toEqual(["sign_in_server", "linear", []]);
  });

  it("shows a sign-in that ended as Sign in again", async () => {
    backend([]);
    const again: ServerSnapshot = { ...base, status: { state: "signIn", reason: "revoked", again: true } };
    const { host } = await mount(createElement(ServersPanel, { servers: [again], catalog: null }));
    expect(host.querySelector("[data-testid=sign-in-state]")?.textContent).toContain("Sign in again");
    expect(host.querySelector("[data-testid=sign-in-button]")?.textContent).toBe("Sign in to Linear again");
  });

  it("shows who signed in until when, signs out, and grants more access on a click", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    backend(calls);
    const signed: ServerSnapshot = {
      ...base,
      status: { state: "ready" },
      signedIn: { issuer: "https://auth.example", expiresAt: 4102444800, renewable: true, scopes: ["mcp:tools"] },
      needsScope: "mcp:tools mcp:admin",
      refusedTools: [{ name: "bad", reason: "property `r`: x-mcp-header must not be empty" }],
    };
    const { host } = await mount(createElement(ServersPanel, { servers: [signed], catalog: null }));
    const state = host.querySelector("[data-testid=sign-in-state]")?.textContent ?? "";
    expect(state).toContain("Signed in");
    expect(state).toContain("renewed without asking");
    expect(state).toContain("https://auth.example");
    expect(host.querySelector("[data-testid=refused-tools]")?.textContent).toContain("x-mcp-header must not be empty");
    await click(host.querySelector("[data-testid=grant-scope-button]"));
    await settle();
    expect((calls[0].args as { extraScopes: string[] }).extraScopes).toEqual(["mcp:tools", "mcp:admin"]);
    await click(host.querySelector("[data-testid=sign-out-button]"));
    await settle();
    expect(calls[1].cmd).toBe("sign_out_server");
    expect(host.textContent).toContain("did not confirm the revocation");
  });

  it("says when a token expires", () => {
    const info = { issuer: "i", expiresAt: 1000, renewable: false, scopes: [] };
    expect(expiryLabel(info, 2_000_000)).toBe("expired");
    expect(expiryLabel({ ...info, expiresAt: null })).toBe("no expiry given");
    expect(expiryLabel({ ...info, renewable: true }, 0)).toMatch(/^expires .*renewed without asking$/);
  });
});
