#!/usr/bin/env bash
# The soak test (not part of CI): ten real servers, TURNS scripted turns (default 1000) with
# parallel calls, random server crashes and hangs, random stops; then it checks that no server
# process is left, that every call a server received is in the audit log, that the history opens
# and every conversation in it is valid, and that memory grew by at most 10% after turn 100.
# See tests/examples/soak.rs. Run `scripts/dev.sh test` once first: it installs the servers.
#
#   scripts/soak.sh [TURNS] [SEED]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
[ -d mcp-servers/node_modules ] || { echo "error: run scripts/dev.sh test first (it installs the MCP servers)" >&2; exit 1; }
cargo build --release --locked -p toolgate-tests --example soak
exec target/release/examples/soak "$@"
