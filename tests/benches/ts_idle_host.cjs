// The TypeScript SDK's side of the memory benchmark (benches/memory.rs runs it).
//
// Usage: node ts_idle_host.cjs <mcp-servers dir> '[{"id": ..., "command": ..., "args": [...]}, ...]'
//
// Connects one official client (@modelcontextprotocol/sdk) to each server over stdio, at once,
// lists each one's tools as a host does, prints "<id> ready" for each and then "ready", and idles
// until its stdin closes; then it closes the clients and exits.
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

async function main() {
  const [dir, servers] = process.argv.slice(2);
  const load = createRequire(path.join(path.resolve(dir), "package.json"));
  const { Client } = load("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = load("@modelcontextprotocol/sdk/client/stdio.js");

  const clients = await Promise.all(
    JSON.parse(servers).map(async ({ id, command, args }) => {
      const client = new Client({ name: "toolgate-bench", version: "1" });
      await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
      await client.listTools();
      console.log(`${id} ready`);
      return client;
    }),
  );
  console.log("ready");
  process.stdin.resume();
  process.stdin.on("end", async () => {
    await Promise.all(clients.map((c) => c.close()));
    process.exit(0);
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
