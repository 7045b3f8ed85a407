#!/usr/bin/env bash
# Type-checks (clippy -D warnings) the crates for macOS on this Linux machine. (Windows is built
# whole and tested under Wine by scripts/wine.sh.) Only
# the targets' standard libraries are needed, which rustup installs; where one cannot be
# installed (no network to the Rust distribution server), this says so in a
# `check-platforms: SKIPPED <target>: <why>` line and goes on: it checks what it can, and never
# pretends to. It exits non-zero when a crate it checks does not type-check.
#
# macOS (x86_64-apple-darwin and aarch64-apple-darwin): every workspace crate whose dependencies
# compile no C, with its tests and benches unless their dev-dependencies alone bring C. A crate
# whose tree holds a package that builds C (ring, aws-lc-sys, libsqlite3-sys, ...: any that
# build-depends on cc, cmake or pkg-config) cannot be checked: its build script needs a C compiler
# and an SDK for macOS, which this machine has not. The lists are worked out from `cargo tree` on
# each run and printed, so a crate that gains C shows up as not checked, with the package that
# brought it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$HOME/.cargo/bin:$PATH"
status=0

# Installs `target`'s standard library if missing; false (with the SKIPPED line) if it cannot.
have_target() {
  local target=$1
  if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    if ! timeout 300 rustup target add "$target" >/dev/null 2>&1; then
      echo "check-platforms: SKIPPED $target: its standard library could not be installed (rustup target add $target)"
      return 1
    fi
  fi
}

# The packages of `target`'s dependency graph whose build compiles (or links through
# pkg-config) C. embed-resource is left out: it only looks for Windows' resource compiler.
c_builders() {
  local target=$1 marker out found="" err
  err=$(mktemp)
  for marker in cc cmake pkg-config; do
    # A marker in no crate's tree is not an error; anything else cargo says is.
    if ! out=$(cargo tree --locked --workspace --target "$target" -e normal,build,dev -i "$marker" \
      --depth 1 --prefix none 2>"$err"); then
      grep -q "did not match any packages" "$err" || { cat "$err" >&2; rm -f "$err"; return 1; }
      continue
    fi
    found+=$(tail -n +2 <<<"$out" | awk '{print $1}')$'\n'
  done
  rm -f "$err"
  awk 'NF' <<<"$found" | { grep -vx -e cc -e cmake -e pkg-config -e embed-resource || true; } | sort -u
}

# The C-building packages (from `c_builders`, one per line in $2) in `crate`'s tree, with the
# edges `$3` (normal,build or normal,build,dev), joined by ", ".
c_in() {
  local target=$1 builders=$2 edges=$3 crate=$4
  cargo tree --locked -p "$crate" --target "$target" -e "$edges" --prefix none |
    awk '{print $1}' | sort -u | { grep -Fx -f <(echo "$builders") || true; } |
    paste -sd, - | sed 's/,/, /g'
}

# The words joined by "; ", or "none".
list() {
  if [ $# -eq 0 ]; then echo none; else printf '%s; ' "$@" | sed 's/; $//'; fi
}

# clippy -D warnings for `target` on the crates after the first two arguments, with `extra`
# (--all-targets or nothing); true when there are none.
clippy_on() {
  local target=$1 extra=$2 crate
  shift 2
  [ $# -gt 0 ] || return 0
  local -a args=()
  for crate in "$@"; do args+=(-p "$crate"); done
  cargo clippy --locked "${args[@]}" $extra --target "$target" -- -D warnings
}

check_macos() {
  local target=$1 crate builders why
  local -a members full=() lib_only=() excluded=()
  have_target "$target" || return 0
  builders=$(c_builders "$target") || { echo "check-platforms: $target: FAILED (cargo tree)" >&2; status=1; return 0; }
  mapfile -t members < <(cargo tree --locked --workspace --target "$target" -e normal \
    --depth 0 --prefix none | awk 'NF {print $1}' | sort -u)
  for crate in "${members[@]}"; do
    why=$(c_in "$target" "$builders" normal,build "$crate")
    if [ -n "$why" ]; then
      excluded+=("$crate ($why)")
    elif [ -n "$(c_in "$target" "$builders" normal,build,dev "$crate")" ]; then
      lib_only+=("$crate")
    else
      full+=("$crate")
    fi
  done
  echo "check-platforms: $target: with their tests: $(list "${full[@]}")"
  echo "check-platforms: $target: without their tests and benches (their dev-dependencies build C): $(list "${lib_only[@]}")"
  echo "check-platforms: $target: not checked (their dependencies build C, and there is no C compiler for macOS here): $(list "${excluded[@]}")"
  local ok=1
  clippy_on "$target" --all-targets "${full[@]}" || ok=0
  clippy_on "$target" "" "${lib_only[@]}" || ok=0
  if [ $ok = 1 ]; then
    echo "check-platforms: $target: $((${#full[@]} + ${#lib_only[@]})) crates type-check"
  else
    echo "check-platforms: $target: FAILED" >&2
    status=1
  fi
}

for target in x86_64-apple-darwin aarch64-apple-darwin; do
  check_macos "$target"
done

exit $status
