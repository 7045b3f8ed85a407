#!/usr/bin/env bash
# Copies the pictures of the last WebDriver run (artifacts/, made by the README's test command or
# `cargo test -p toolgate-tests --test app_webdriver`) into docs/screenshots/, the ones README.md
# and docs/features.md show. The screenshot suite (tests/tests/app_webdriver/screens.rs) draws
# every screen and state in both looks into artifacts/screens/; the first run and the provenance
# card come from the scenario itself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
from="$ROOT/artifacts"
to="$ROOT/docs/screenshots"
copy() {
  [[ -f "$from/$1" ]] || { echo "screenshots: $from/$1 is missing: run the WebDriver suite first" >&2; exit 1; }
  cp "$from/$1" "$to/$2"
  echo "docs/screenshots/$2 <- artifacts/$1"
}
copy screens/light-chat-approval.png chat.png
copy screens/dark-chat-approval.png chat-dark.png
copy screens/light-servers.png servers.png
copy screens/light-activity.png activity.png
copy screens/light-rule-editor.png rule-editor.png
copy screens/light-add-server-wellKnown.png add-server.png
copy screens/light-settings-diagnostics.png diagnostics.png
copy e2e-first-run.png first-run.png
copy e2e-provenance.png provenance.png
