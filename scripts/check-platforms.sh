#!/usr/bin/env bash
# Type-checks the platform-specific crates for macOS and Windows on this Linux machine: the
# keychain store (toolgate-secrets), the process guard (toolgate-guard) and the sandbox
# (toolgate-sandbox: the macOS profile, the Windows AppContainer). They have no C in
# their dependencies, so no cross compiler is needed; only the targets' standard libraries, which
# rustup installs. Where they cannot be installed (no network to the Rust distribution server),
# this says so and exits 0: it checks what it can, and never pretends to.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
status=0
for target in x86_64-apple-darwin x86_64-pc-windows-gnu; do
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    if ! timeout 300 rustup target add "$target" >/dev/null 2>&1; then
      echo "check-platforms: SKIPPED $target: its standard library could not be installed (rustup target add $target)"
      continue
    fi
  fi
  if cargo clippy --locked -p toolgate-secrets -p toolgate-guard -p toolgate-sandbox --target "$target" -- -D warnings; then
    echo "check-platforms: $target: toolgate-secrets, toolgate-guard and toolgate-sandbox type-check"
  else
    echo "check-platforms: $target: FAILED" >&2
    status=1
  fi
done
exit $status
