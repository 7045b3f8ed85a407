#!/usr/bin/env bash
# The prompt-injection benchmark in full (tests/injection/README.md): every AgentDojo user task
# alone, with each replayable injection task, and our adaptive variants, each replayed by the
# scripted model through the real `toolgate run` in three set-ups (every tool allowed by one
# server rule, by one rule per tool, and no rules with read-only tools allowed), scored by
# AgentDojo's own checks. Prints the table in markdown.
#
#   scripts/injection.sh [all|sample|benign]     (after the README's set-up: scripts/dev.sh test)
#
# `all` (the default) runs every user task with every replayable injection task: about 2,150
# runs of `toolgate run`, over an hour on two cores. `sample` keeps a third of the attacks (every
# user task and injection task still in it). `benign` runs each user task alone, no attacks: the
# account of every call a user would be asked about, and why (the table's last section).
# TOOLGATE_INJECTION_JOBS sets how many runs go at once (2 by default). The test command runs
# the smallest slice of the same benchmark (cargo test -p toolgate-tests --test injection).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

[ -x tests/injection/.venv/bin/python ] ||
  { echo "error: tests/injection/.venv is missing: run the README's set-up first (scripts/dev.sh test)" >&2; exit 1; }

cargo build --locked -p toolgate-cli --bin toolgate
TABLE="$(mktemp)"
trap 'rm -f "$TABLE"' EXIT
TOOLGATE_INJECTION="${1:-all}" TOOLGATE_INJECTION_TABLE="$TABLE" \
  cargo test --locked -p toolgate-tests --test injection -- --nocapture >&2
echo
cat "$TABLE"
