// One tool call by the official TypeScript SDK client through a stdio server command, as a host
// makes it: the WebDriver test uses it to call through `toolgate-app connect` while the window
// answers the gate.
//
// Usage: node one_call.cjs <mcp-servers dir> <tool> <arguments as JSON> -- <command> [args...]
//
// Prints one line of JSON: {"isError": bool, "text": the result's text}.
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

async function main() {
  const dash = process.argv.indexOf("--");
  const [dir, tool, args] = process.argv.slice(2, dash);
  const [command, ...commandArgs] = process.argv.slice(dash + 1);
  const load = createRequire(path.join(path.resolve(dir), "package.json"));
  const { Client } = load("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = load("@modelcontextprotocol/sdk/client/stdio.js");

  const client = new Client({ name: "ts-sdk-client", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args: commandArgs, stderr: "inherit" }));
  const result = await client.callTool({ name: tool, arguments: JSON.parse(args) }, undefined, {
    timeout: 120000,
  });
  const text = result.content.map((c) => c.text ?? "").join("");
  process.stdout.write(JSON.stringify({ isError: result.isError === true, text }) + "\n");
  await client.close();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
