#!/usr/bin/env bash
# Toolgate's benchmark suite, in one command, after the README's set-up (`scripts/dev.sh test`,
# which installs the MCP servers, the TypeScript SDK and mcp-server-time the benchmarks use):
#
#   scripts/bench.sh
#
# Runs every benchmark in release (as `cargo bench` builds), each printing its own table, then
# prints the machine and a summary: each headline figure, what it was compared with in the same
# run, the ratio, and the target. Record the results in BENCHMARKS.md.
#
# The memory benchmark measures the window app beside the smallest Tauri app: both are built here
# in release (the first time, that takes a while on two cores), and the benchmarks run in a
# private D-Bus session under Xvfb with a throw-away unlocked keyring, as the test command's
# suites do. The release .deb is not built here (it takes a quarter of an hour on two cores); its
# size is reported when one has been built.
#
# Timings are only comparable on a quiet machine: the script says the load average at the start
# and the end, and warns when it is above 1.5.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

for needed in \
  mcp-servers/node_modules/@modelcontextprotocol/sdk/package.json \
  mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js \
  mcp-servers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js \
  mcp-servers/.venv/bin/mcp-server-time \
  tests/injection/.venv/bin/python; do
  [ -e "$needed" ] || die "$needed is missing: run the README's set-up first (scripts/dev.sh test)"
done
command -v node >/dev/null || die "node is missing: run the README's set-up first (scripts/dev.sh test)"
command -v cargo >/dev/null || die "Rust is missing: install it with rustup (https://rustup.rs)"

SUMMARY="$(mktemp)"
trap 'rm -f "$SUMMARY" "$SUMMARY.catalog" "$SUMMARY.injection" "$SUMMARY.window"' EXIT
export TOOLGATE_BENCH_SUMMARY="$SUMMARY"

machine() {
  local cpu ram
  cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  ram="$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  printf '%s cores (nproc), %s, %s RAM, %s, load average %s\n' \
    "$(nproc)" "${cpu:-unknown CPU}" "$ram" "$(uname -sr)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
BEFORE="$(machine)"
load="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load" 'BEGIN { exit !(l > 1.5) }'; then
  echo "warning: the load average is $load (above 1.5): other work will slow the timings down" >&2
fi

# Runs "$@" in a private D-Bus session with an unlocked, throw-away gnome-keyring and an X server
# (the same as scripts/dev.sh's in_desktop_session), when those are installed.
in_desktop_session() {
  if ! command -v dbus-run-session >/dev/null || ! command -v xvfb-run >/dev/null; then
    "$@"
    return
  fi
  dbus-run-session -- xvfb-run -a -s "-screen 0 1280x900x24" bash -c '
    set -euo pipefail
    export XDG_DATA_HOME="$(mktemp -d)"
    trap "rm -rf \"\$XDG_DATA_HOME\"" EXIT
    if command -v gnome-keyring-daemon >/dev/null; then
      eval "$(printf toolgate | gnome-keyring-daemon --unlock --components=secrets)"
      export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK
    fi
    "$@"
  ' bash "$@"
}

step "The app and the smallest Tauri app in release, for the memory benchmark"
(cd ui && npm run build)
cargo build --locked --release -p toolgate -p toolgate-minimal-app --features tauri/custom-protocol

step "Per-call overhead, parallel calls, start-up, memory, streaming, a thousand tools (cargo bench -p toolgate-tests)"
in_desktop_session cargo bench --locked -p toolgate-tests

step "Gateway (cargo bench -p toolgate-cli --bench gateway)"
cargo bench --locked -p toolgate-cli --bench gateway

step "Secrets scan of a 100 kB result (cargo bench -p toolgate-scan --bench scan)"
cargo bench --locked -p toolgate-scan --bench scan

step "Provenance: judging a call with 100 kB of outside content seen (cargo bench -p toolgate-gate --bench provenance)"
cargo bench --locked -p toolgate-gate --bench provenance

step "Catalog (cargo bench -p toolgate-catalog --bench build)"
cargo bench --locked -p toolgate-catalog --bench build | tee "$SUMMARY.catalog"
# Criterion prints the name, then "time: [low estimate high]" (on the next line for long names).
catalog="$(awk '/^build 1000 tools \/ 20 servers \(auto\)/ { found = 1 }
  found && /time:/ { sub(/.*\[/, ""); print $3, $4; exit }' "$SUMMARY.catalog")"
echo "| Catalog, 1,000 tools from 20 servers (auto naming) | ${catalog:-not found} | nothing (no target set) | — | — | — |" >> "$SUMMARY"

step "The window's script: the chat's Markdown renderer, JavaScriptCore's JIT on and off (scripts/window-bench.sh)"
scripts/window-bench.sh | tee "$SUMMARY.window"
sed -n 's/^Median total: JIT on \([0-9]*\) ms, off \([0-9]*\) ms: off takes \([0-9.]*x\) as long\./| The window'"'"'s script, a long reply streamed (JIT on, as the app runs) | \1 ms | the JIT off (JSC_useJIT=0): \2 ms | \3 | nothing (no target set) | — |/p' \
  "$SUMMARY.window" >> "$SUMMARY"

step "Prompt injection: AgentDojo replayed through toolgate run (scripts/injection.sh)"
scripts/injection.sh | tee "$SUMMARY.injection"
# Each set-up's heading, then its overall row: attacks succeeded and benign tasks done without a
# held call, into the summary.
awk -F'|' '/^### / { setup = substr($0, 5) }
  /^\| \*\*overall\*\*/ {
    gsub(/^ +| +$/, "", $5); gsub(/^ +| +$/, "", $3)
    printf "| Prompt injection, %s: attacks succeeded | %s | benign tasks done without a held call: %s | — | 0%% (issue 39) | %s |\n",
      setup, $5, $3, ($5 ~ /^0\.0%/ ? "met" : "**missed**") }' "$SUMMARY.injection" >> "$SUMMARY"

step "Package (.deb size)"
shopt -s nullglob
debs=("$TARGET_DIR"/release/bundle/deb/*.deb)
if [ ${#debs[@]} -gt 0 ]; then
  for deb in "${debs[@]}"; do
    bytes="$(stat -c %s "$deb")"
    ls -l "$deb"
    awk -v b="$bytes" -v name="$(basename "$deb")" -v when="$(date -r "$deb" '+%Y-%m-%d %H:%M')" 'BEGIN {
      printf "| Package, %s (built %s) | %.1f MB (%.1f MiB) | the target, 15 MB | %.2fx | ≤ 15 MB | %s |\n",
        name, when, b / 1e6, b / 1048576, b / 15e6, (b <= 15e6 ? "met" : "**missed**") }' >> "$SUMMARY"
  done
else
  echo "No release .deb in $TARGET_DIR/release/bundle/deb/. Build it (15+ minutes on two cores) with:"
  echo "    ui/node_modules/.bin/tauri build --bundles deb"
  echo "then run this again to report its size."
  echo "| Package, release .deb | not built (\`ui/node_modules/.bin/tauri build --bundles deb\`) | — | — | ≤ 15 MB | — |" >> "$SUMMARY"
fi

step "Summary"
echo "Machine at the start: $BEFORE"
echo "Machine at the end:   $(machine)"
echo
echo "| benchmark | result | compared with (same run) | ratio | target | target met |"
echo "|---|---|---|---:|---|---|"
cat "$SUMMARY"
