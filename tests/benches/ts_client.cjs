// The TypeScript SDK's side of the per-call benchmark (benches/per_call.rs runs it).
//
// Usage: node ts_client.cjs <mcp-servers dir> <calls> <in flight> <warm-up calls> -- <server command> [args...]
//
// Connects the official client (@modelcontextprotocol/sdk, pinned in mcp-servers/package.json)
// to the server over stdio, lists its tools as a host does, makes <warm-up calls> echo calls, then
// times <calls> sequential echo calls and <calls> with <in flight> at a time. Prints one line of
// JSON: {"sdk": version, "sequential_ms": ..., "in_flight_ms": ...}.
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

async function main() {
  const dash = process.argv.indexOf("--");
  const [dir, calls, inFlight, warmUp] = process.argv.slice(2, dash);
  const [command, ...args] = process.argv.slice(dash + 1);
  // Resolved from mcp-servers/, where the set-up installs it, not from next to this script.
  const load = createRequire(path.join(path.resolve(dir), "package.json"));
  const { Client } = load("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = load("@modelcontextprotocol/sdk/client/stdio.js");
  // The package exports no package.json: read it from where it was installed.
  const sdk = require(path.join(path.resolve(dir), "node_modules/@modelcontextprotocol/sdk/package.json")).version;

  const client = new Client({ name: "toolgate-bench", version: "1" });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  await client.listTools();
  let n = 0;
  const call = () => client.callTool({ name: "echo", arguments: { text: `call ${n++}` } });

  for (let i = 0; i < Number(warmUp); i++) await call();

  let started = process.hrtime.bigint();
  for (let i = 0; i < Number(calls); i++) await call();
  const sequential = Number(process.hrtime.bigint() - started) / 1e6;

  let left = Number(calls);
  const worker = async () => {
    while (left > 0) {
      left--;
      await call();
    }
  };
  started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Number(inFlight) }, worker));
  const parallel = Number(process.hrtime.bigint() - started) / 1e6;

  await client.close();
  console.log(JSON.stringify({ sdk, sequential_ms: sequential, in_flight_ms: parallel }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
