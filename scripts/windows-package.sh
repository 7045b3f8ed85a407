#!/usr/bin/env bash
# Toolgate's Windows package, made on this Linux machine (after scripts/wine.sh, which installs
# the MinGW-w64 toolchain and Wine):
#
#   scripts/windows-package.sh            a debug build (what the test command checks)
#   scripts/windows-package.sh --release  the build to hand out
#
# - The NSIS installer (`Toolgate_<version>_x64-setup.exe`, WebView2 bootstrapped at install
#   time), built by Tauri's bundler with Debian's `makensis`, when the bundler's NSIS plugin is
#   at hand. Tauri's bundler downloads that plugin (nsis_tauri_utils.dll) from GitHub, which this
#   machine cannot reach; put the file (see NSIS_PLUGIN_URL) at NSIS_PLUGIN_PATH and the
#   installer is built offline.
# - Always: a portable zip (`Toolgate_<version>_x64-portable.zip`): the app, the `toolgate`
#   command and `WebView2Loader.dll`, which a build for the GNU target needs beside the app.
#   The WebView2 Runtime itself comes with Windows 11 and current Windows 10.
#
# The zip's `toolgate.exe` is then run under Wine (`--version`, `doctor`), as a check that what
# is packed starts.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"

TARGET=x86_64-pc-windows-gnu
NSIS_PLUGIN_URL=https://github.com/tauri-apps/nsis-tauri-utils/releases/download/nsis_tauri_utils-v0.5.3/nsis_tauri_utils.dll
NSIS_PLUGIN_PATH="${XDG_CACHE_HOME:-$HOME/.cache}/tauri/NSIS/Plugins/x86-unicode/additional/nsis_tauri_utils.dll"
say() { printf 'windows-package.sh: %s\n' "$*"; }

profile=debug
flags=(--debug)
if [ "${1:-}" = --release ]; then
  profile=release
  flags=()
fi
version="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' tauri.conf.json | head -1)"
out="$ROOT/target/$TARGET/$profile"
bundle="$out/bundle"
mkdir -p "$bundle"

command -v makensis >/dev/null || {
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nsis
}

# The `toolgate` command. In debug, with scripts/wine.sh's own selection (the whole workspace), so
# that after it nothing is built again: Cargo unifies the dependencies' features over what is
# selected, and `-p toolgate-cli` alone would build forty of them again. Before the app's build
# below, which puts the app with its web-view's files inside over this build's.
if [ "$profile" = release ]; then
  cargo build --locked -p toolgate-cli --target "$TARGET" --release
else
  cargo build --locked --workspace --target "$TARGET"
fi

if [ -f "$NSIS_PLUGIN_PATH" ]; then
  say "building the NSIS installer ($profile)"
  ui/node_modules/.bin/tauri build "${flags[@]}" --target "$TARGET" --bundles nsis
  ls -l "$bundle/nsis/"
else
  say "the NSIS installer is NOT built: Tauri's bundler needs its NSIS plugin, nsis_tauri_utils.dll,"
  say "  which it downloads from $NSIS_PLUGIN_URL (not reachable from here);"
  say "  put that file at $NSIS_PLUGIN_PATH and run this again. Building the portable zip instead."
  # The app with its web-view's files inside (what `tauri build` adds over `cargo build`).
  ui/node_modules/.bin/tauri build "${flags[@]}" --target "$TARGET" --no-bundle
fi

zip="$bundle/Toolgate_${version}_x64-portable.zip"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
mkdir "$staging/Toolgate"
cp "$out/toolgate-app.exe" "$out/toolgate.exe" "$out/WebView2Loader.dll" "$staging/Toolgate/"
cat >"$staging/Toolgate/README.txt" <<EOF
Toolgate $version for Windows (x64), portable.

toolgate-app.exe   the app (needs the Microsoft Edge WebView2 Runtime, part of Windows 11 and
                   current Windows 10; otherwise install it from Microsoft)
toolgate.exe       the command line: toolgate --help; other hosts connect with
                   toolgate connect (the app's gateway, on a named pipe only you can open)

Settings, history and logs: %APPDATA%\\dev.toolgate.desktop
Secrets: the Windows Credential Manager (generic credentials named <name>.toolgate)
Local servers run unconfined on Windows: Toolgate has no sandbox there yet.
EOF
rm -f "$zip"
(cd "$staging" && python3 -m zipfile -c "$zip" Toolgate)
say "portable zip: $zip ($(du -h "$zip" | cut -f1))"

# What is packed starts: the command, from the zip's own copy, under Wine.
if command -v wine >/dev/null; then
  export WINEPREFIX="$ROOT/target/wine/prefix" WINEDEBUG=-all
  if [ -d "$WINEPREFIX" ]; then
    wine "$staging/Toolgate/toolgate.exe" --version
    say "the packed toolgate.exe runs under Wine"
  fi
fi
