// The bundle tab of Add server, in jsdom against Tauri's IPC mock: a .mcpb dropped on the window
// is previewed with its signer (or plainly "Unsigned"), its secret asked in a password field, and
// installed with the values by key; a tampered one shows why and offers no install.
import { afterEach, describe, expect, it } from "vitest";
import { act, createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { emit } from "@tauri-apps/api/event";
import BundleTab from "./BundleTab";
import type { BundlePreview, Signature } from "../ipc";
import { click, mount, settle, type } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
});

function preview(signature: Signature): BundlePreview {
  return {
    name: "weather",
    displayName: "Weather",
    version: "1.2.0",
    description: "Forecasts",
    author: "Ann Example",
    serverType: "node",
    manifestVersion: "0.3",
    signature,
    userConfig: [
      { key: "api_key", type: "string", title: "API key", description: "", required: true, sensitive: true, multiple: false },
      { key: "dirs", type: "directory", title: "Folders", description: "", required: false, sensitive: false, multiple: true },
      { key: "units", type: "string", title: "Units", description: "", required: false, sensitive: false, multiple: false, default: "metric" },
    ],
    files: 3,
    suggestedId: "weather",
  };
}

const SIGNED: Signature = {
  status: "signed",
  name: "Toolgate Test Publisher",
  subject: "CN=Toolgate Test Publisher,O=Toolgate Tests",
  issuer: "Toolgate Test Publisher",
  selfSigned: true,
  chainValid: true,
  trusted: false,
  fingerprint: "ab".repeat(32),
  problem: "its chain ends at a certificate this computer does not trust",
};

const q = <T extends Element>(sel: string) => document.querySelector<T>(sel);

describe("installing an MCP bundle", () => {
  it("previews a dropped bundle with its signer, asks its secret hidden, and installs it", async () => {
    const calls: { cmd: string; args: unknown }[] = [];
    mockIPC(
      (cmd, args) => {
        calls.push({ cmd, args });
        if (cmd === "inspect_bundle") return preview(SIGNED);
        if (cmd === "install_bundle") return { id: "wx", name: "Weather", version: "1.2.0", signature: SIGNED, secrets: 1, folder: "/d/bundles/wx" };
      },
      { shouldMockEvents: true },
    );
    const added: string[] = [];
    await mount(createElement(BundleTab, { onAdded: (id: string) => added.push(id) }));

    await act(() => emit("tauri://drag-drop", { paths: ["/home/me/Downloads/weather.mcpb"], position: { x: 1, y: 1 } }));
    await settle();
    expect(calls.find((c) => c.cmd === "inspect_bundle")?.args).toEqual({ path: "/home/me/Downloads/weather.mcpb" });
    const shown = q("[data-testid=bundle-preview]")?.textContent ?? "";
    expect(shown).toContain("Weather");
    expect(shown).toContain("1.2.0");
    expect(shown).toContain("Ann Example");
    expect(q("[data-testid=bundle-signed]")?.textContent).toContain("Signed by Toolgate Test Publisher");
    expect(q("[data-testid=bundle-self-signed]")).not.toBeNull();
    expect(q("[data-testid=bundle-unsigned]")).toBeNull();

    const secret = q<HTMLInputElement>("[data-testid=bundle-field-api_key] input");
    expect(secret?.type).toBe("password");
    expect(q<HTMLButtonElement>("[data-testid=bundle-install]")?.disabled).toBe(true);
    expect(q("[data-testid=bundle-missing]")?.textContent).toContain("API key");

    await type(secret!, "k-secret-1");
    await type(q<HTMLTextAreaElement>("[data-testid=bundle-field-dirs] textarea")!, "/srv/a\n/srv/b\n");
    await type(q<HTMLInputElement>("[data-testid=bundle-id]")!, "wx");
    await click(q("[data-testid=bundle-install]"));
    await settle();
    expect(calls.find((c) => c.cmd === "install_bundle")?.args).toEqual({
      path: "/home/me/Downloads/weather.mcpb",
      id: "wx",
      values: { api_key: ["k-secret-1"], dirs: ["/srv/a", "/srv/b"], units: ["metric"] },
    });
    expect(added).toEqual(["wx"]);
  });

  it("says plainly when a bundle is unsigned, and refuses a tampered one", async () => {
    let signature: Signature = { status: "unsigned" };
    const calls: string[] = [];
    mockIPC((cmd) => {
      calls.push(cmd);
      if (cmd === "inspect_bundle") return preview(signature);
    });
    await mount(createElement(BundleTab, { onAdded: () => {} }));
    await type(q<HTMLInputElement>("[data-testid=bundle-path]")!, "/tmp/w.mcpb");
    await click(q("[data-testid=bundle-open]"));
    await settle();
    expect(q("[data-testid=bundle-unsigned]")?.textContent).toContain("Unsigned");
    expect(q("[data-testid=bundle-signed]")).toBeNull();
    expect(q("[data-testid=bundle-install]")).not.toBeNull();

    signature = { status: "tampered", reason: "the content does not match its signature (changed after signing)" };
    await click(q("[data-testid=bundle-open]"));
    await settle();
    expect(q("[data-testid=bundle-tampered]")?.textContent).toContain("changed after signing");
    expect(q("[data-testid=bundle-install]")).toBeNull();
    expect(calls).not.toContain("install_bundle");
  });

  it("shows the backend's refusal in words", async () => {
    mockIPC((cmd) => {
      if (cmd === "inspect_bundle") throw { kind: "bundle", message: "not an MCP bundle: it has no manifest.json at its root" };
    });
    await mount(createElement(BundleTab, { onAdded: () => {} }));
    await type(q<HTMLInputElement>("[data-testid=bundle-path]")!, "/tmp/x.zip");
    await click(q("[data-testid=bundle-open]"));
    await settle();
    expect(q("[data-testid=bundle-problem]")?.textContent).toContain("no manifest.json");
  });
});
