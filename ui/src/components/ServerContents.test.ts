// A server's resources and prompts in its card, rendered by React in jsdom against Tauri's IPC
// mock: folded by default, a resource is read on request, its text shown as text (markup in it
// stays inert), images only as data: URLs of raster types, other bytes by size and type.
import { afterEach, describe, expect, it } from "vitest";
import { createElement } from "react";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import ServersPanel from "./ServersPanel";
import type { ServerSnapshot } from "../ipc";
import { click, mount, settle } from "../testing";

afterEach(() => {
  clearMocks();
  document.body.innerHTML = "";
  delete (window as { pwned?: boolean }).pwned;
});

const server: ServerSnapshot = {
  id: "docs",
  name: "Docs",
  enabled: true,
  status: { state: "ready" },
  implementation: null,
  protocolVersion: null,
  tools: [],
  resources: [
    { uri: "docs://page", name: "Page", description: "A page with markup", mimeType: "text/html" },
    { uri: "docs://logo", name: "Logo", description: null, mimeType: "image/png" },
    { uri: "docs://missing", name: "Missing", description: null, mimeType: null },
  ],
  prompts: [
    {
      name: "summarize",
      description: "Summarize a page",
      arguments: ["uri", "length"],
      argumentInfo: [
        { name: "uri", description: null, required: false },
        { name: "length", description: null, required: false },
      ],
    },
    { name: "hello", description: null, arguments: [], argumentInfo: [] },
  ],
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

const PAGE = '<script>window.pwned = true</script><img src=x onerror="window.pwned = true"><b>bold</b>';

describe("a server's resources and prompts", () => {
  it("reads a resource on request and shows what it holds safely", async () => {
    const reads: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd === "import_sources") return { claudeDesktop: null };
      if (cmd === "list_secrets") return [];
      if (cmd === "list_hosts") return [];
      if (cmd === "tool_settings") return { naming: "auto" };
      if (cmd === "read_resource") {
        reads.push(args);
        const { uri } = args as { uri: string };
        if (uri === "docs://page") return { contents: [{ uri, mimeType: "text/html", text: PAGE }] };
        if (uri === "docs://logo") {
          return {
            contents: [
              { uri, mimeType: "image/png", blob: "iVBORw0KGgo=" },
              { uri: "docs://logo.svg", mimeType: "image/svg+xml", blob: "PHN2Zz48L3N2Zz4=" },
              { uri: "docs://logo.bin", mimeType: "application/octet-stream", blob: "AAECAwQ=" },
            ],
          };
        }
        throw { kind: "server", message: "resource not found: docs://missing" };
      }
    });
    const app = await mount(createElement(ServersPanel, { servers: [server], catalog: null }));
    const { host } = app;

    const resources = host.querySelector("[data-testid=resources]") as HTMLDetailsElement;
    expect(resources.tagName).toBe("DETAILS");
    expect(resources.open).toBe(false);
    expect(resources.querySelector("summary")?.textContent).toBe("Resources (3)");
    expect(resources.textContent).toContain("docs://page");
    expect(resources.textContent).toContain("A page with markup");

    await click(host.querySelector("[aria-label='Read Page']"));
    await settle();
    expect(reads).toEqual([{ serverId: "docs", uri: "docs://page" }]);
    const text = host.querySelector("[data-testid=resource-text]") as HTMLElement;
    expect(text.tagName).toBe("PRE");
    expect(text.textContent).toBe(PAGE);
    expect(text.querySelector("*")).toBeNull();
    expect(host.querySelector("script")).toBeNull();
    await settle(20);
    expect((window as { pwned?: boolean }).pwned).toBeUndefined();

    await click(host.querySelector("[aria-label='Read Logo']"));
    await settle();
    const images = [...host.querySelectorAll("[data-testid=resource-image]")] as HTMLImageElement[];
    expect(images.map((i) => i.getAttribute("src"))).toEqual(["data:image/png;base64,iVBORw0KGgo="]);
    expect(images[0].alt).toBe("Image from Logo");
    // SVG is not shown as an image; neither are bytes of no known type.
    expect([...host.querySelectorAll("[data-testid=resource-blob]")].map((b) => b.textContent)).toEqual([
      "11 bytes of image/svg+xml",
      "5 bytes of application/octet-stream",
    ]);

    await click(host.querySelector("[aria-label='Read Missing']"));
    await settle();
    expect(host.querySelector("[role=alert]")?.textContent).toBe("resource not found: docs://missing");

    const prompts = host.querySelector("[data-testid=prompts]") as HTMLDetailsElement;
    expect(prompts.open).toBe(false);
    expect(prompts.querySelector("summary")?.textContent).toBe("Prompts (2)");
    const rows = [...prompts.querySelectorAll("[data-testid=prompt]")].map((p) => p.textContent);
    expect(rows).toEqual(["summarizeSummarize a pageArguments: uri, length", "helloNo arguments"]);
    app.unmount();
  });
});
