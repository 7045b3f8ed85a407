#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets/) for SECONDS each, default 600, with cargo fuzz on
# the nightly toolchain, starting from and adding to the committed corpora (fuzz/corpus/).
#
#   scripts/fuzz.sh [SECONDS]
#
# Not part of CI's run (which only checks that the targets build). A crash stops the run with the
# input saved under fuzz/artifacts/<target>/; reproduce it with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>
# and turn it into a regression test in the crate it came from. At the end the corpora are
# minimised (`cargo fuzz cmin`), so what is committed stays small.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"
export PATH="$HOME/.cargo/bin:$PATH"
EACH="${1:-600}"
case "$EACH" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac

command -v rustup >/dev/null && rustup toolchain list | grep -q '^nightly' || {
  echo "error: the nightly toolchain is needed (rustup toolchain install nightly)" >&2; exit 1; }
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "==> Installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

targets=$(cargo +nightly fuzz list)
echo "==> Building the fuzz targets"
cargo +nightly fuzz build
summary=()
for target in $targets; do
  mkdir -p "corpus/$target"
  before=$(find "corpus/$target" -type f | wc -l)
  echo "==> $target for ${EACH}s (corpus: $before inputs)"
  log="$(mktemp)"
  if cargo +nightly fuzz run "$target" "corpus/$target" -- \
      -max_total_time="$EACH" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
    echo "    ok: $runs runs, coverage $cov"
    summary+=("$target: ok, $runs runs in ${EACH}s, coverage $cov")
    rm -f "$log"
  else
    tail -40 "$log"
    echo "    CRASH in $target: see fuzz/artifacts/$target/ (log: $log)" >&2
    summary+=("$target: CRASH")
  fi
  cargo +nightly fuzz cmin "$target" "corpus/$target" >/dev/null 2>&1 || true
done

echo
echo "==> Summary"
printf '  %s\n' "${summary[@]}"
if printf '%s\n' "${summary[@]}" | grep -q CRASH; then exit 1; fi
