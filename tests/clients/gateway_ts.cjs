// The official TypeScript SDK client (@modelcontextprotocol/sdk, pinned in mcp-servers/package.json)
// connected to Toolgate's gateway the way a host connects: it launches `toolgate connect` over
// stdio. crates/cli/tests/gateway.rs runs it and answers the gate meanwhile.
//
// Usage: node gateway_ts.cjs <mcp-servers dir> <toolgate> <data dir> <root dir>
//
// Prints one JSON line per step: the tools, resources and prompts it sees (one resource read,
// one prompt got), an echo allowed by a rule, a write_file the test denies at the gate, and one
// it approves.
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

async function main() {
  const [dir, toolgate, dataDir, root] = process.argv.slice(2);
  const load = createRequire(path.join(path.resolve(dir), "package.json"));
  const { Client } = load("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = load("@modelcontextprotocol/sdk/client/stdio.js");

  const client = new Client({ name: "ts-sdk-client", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: toolgate,
      args: ["--data-dir", dataDir, "connect", "--no-start"],
      stderr: "inherit",
    }),
  );
  const say = (value) => process.stdout.write(JSON.stringify(value) + "\n");
  const text = (result) => result.content.map((c) => c.text ?? "").join("");

  const { tools } = await client.listTools();
  say({ step: "list", tools: tools.map((t) => t.name).sort() });
  const { resources } = await client.listResources();
  const doc = resources.find((r) => r.uri.endsWith("architecture.md"));
  const read = await client.readResource({ uri: doc.uri });
  say({ step: "resource", count: resources.length, text: read.contents[0].text.slice(0, 200) });
  const { prompts } = await client.listPrompts();
  const prompt = await client.getPrompt({ name: "simple-prompt" });
  say({ step: "prompt", names: prompts.map((p) => p.name), first: prompt.messages[0].content.text });
  for (const [step, name, args] of [
    ["echo", "echo", { message: "through the gateway" }],
    ["denied", "write_file", { path: path.join(root, "denied.txt"), content: "no" }],
    ["approved", "write_file", { path: path.join(root, "approved.txt"), content: "yes" }],
  ]) {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
    say({ step, isError: result.isError === true, text: text(result) });
  }
  await client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
