// The identity provider form: filled in and saved through set_identity_provider, the backend's
// refusal shown as it said it, and locked when the organisation's policy sets it.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { createRoot } from "react-dom/client";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import IdentityProviderForm from "./IdentityProviderForm";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
afterEach(() => clearMocks());
const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 0)));

const managed = (locked: boolean) => ({
  active: locked,
  origins: [],
  warnings: [],
  locks: {},
  requiredServers: [],
  allowUserServers: true,
  registryOnly: false,
  rules: [],
  telemetryEndpoint: null,
  identityProviderLocked: locked,
  readAtMs: null,
});

async function mount() {
  const host = document.createElement("div");
  document.body.append(host);
  const root = createRoot(host);
  await act(async () => root.render(createElement(IdentityProviderForm)));
  await settle();
  return { host, root };
}

async function type(host: HTMLElement, id: string, value: string) {
  const input = host.querySelector(`#${id}`) as HTMLInputElement;
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
  await act(async () => {
    setValue?.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
  });
}

describe("the identity provider", () => {
  it("is filled in and saved, and a refusal is shown as the backend said it", async () => {
    const sent: unknown[] = [];
    let refuse = true;
    mockIPC((cmd, args) => {
      if (cmd === "identity_provider") return null;
      if (cmd === "managed_policy") return managed(false);
      if (cmd === "set_identity_provider") {
        sent.push((args as { provider: unknown }).provider);
        if (refuse) throw "identityProvider.idToken: must be a keychain reference such as ${secret:IDP_ID_TOKEN}";
        return (args as { provider: unknown }).provider;
      }
    });
    const { host, root } = await mount();
    await type(host, "idp-issuer", "https://idp.example.com");
    await type(host, "idp-tokenEndpoint", "https://idp.example.com/oauth2/token");
    await type(host, "idp-clientId", "toolgate");
    await type(host, "idp-idToken", "eyJpasted");
    await act(async () => (host.querySelector("[data-testid=idp-save]") as HTMLButtonElement).click());
    await settle();
    expect(host.querySelector("[role=alert]")?.textContent).toContain("identityProvider.idToken");
    refuse = false;
    await type(host, "idp-idToken", "${secret:IDP_ID_TOKEN}");
    await act(async () => (host.querySelector("[data-testid=idp-save]") as HTMLButtonElement).click());
    await settle();
    expect(sent.at(-1)).toEqual({
      issuer: "https://idp.example.com",
      tokenEndpoint: "https://idp.example.com/oauth2/token",
      clientId: "toolgate",
      clientSecret: null,
      idToken: "${secret:IDP_ID_TOKEN}",
    });
    expect(host.textContent).toContain("Saved.");
    expect(host.querySelector("[data-testid=idp-remove]")).not.toBeNull();
    act(() => root.unmount());
  });

  it("cannot be changed when the organisation sets it", async () => {
    mockIPC((cmd) => {
      if (cmd === "identity_provider")
        return {
          issuer: "https://idp.corp.example",
          tokenEndpoint: "https://idp.corp.example/token",
          clientId: "toolgate",
          clientSecret: null,
          idToken: "${secret:IDP_ID_TOKEN}",
        };
      if (cmd === "managed_policy") return managed(true);
    });
    const { host, root } = await mount();
    expect((host.querySelector("#idp-issuer") as HTMLInputElement).value).toBe("https://idp.corp.example");
    expect((host.querySelector("#idp-issuer") as HTMLInputElement).disabled).toBe(true);
    expect(host.querySelector("[data-testid=idp-locked]")?.textContent).toContain("Set by your organisation");
    expect(host.querySelector("[data-testid=idp-save]")).toBeNull();
    act(() => root.unmount());
  });
});
