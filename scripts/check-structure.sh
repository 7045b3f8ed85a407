#!/usr/bin/env bash
# Structure check: no import circle between the modules of any Rust crate (crates/*/src and
# src-tauri/; edges into and out of a crate's root file do not count), no product file over 800
# lines (crates/*/src, src-tauri/, ui/src/; test and generated files exempt), and no
# `Agent::new` in product code outside crates/host/src, no product file allowing unsafe code that
# the audit note in Cargo.toml does not name; README.md within 15,000 bytes, each window command
# named once, no public `Result<_, String>` and no `pub` field on `Host` (front ends use Host and
# its services only) (scripts/check_surface.py); and docs/threat-model.md held to the code
# (scripts/check_threat_model.py). The rules, and what counts as an edge, are written at the
# top of scripts/check_structure.py; its own tests
# (scripts/check_structure_test.py, fixture trees) run first. Needs only python3 (3.11+, standard
# library). Exits 1 listing every problem found.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! out="$(python3 "$ROOT/scripts/check_structure_test.py" 2>&1)"; then
  printf '%s\n' "$out" >&2
  echo "structure: the checker's own tests fail (scripts/check_structure_test.py)" >&2
  exit 1
fi
python3 "$ROOT/scripts/check_structure.py" "$ROOT"
# README.md a first page, each window command named once, no public Result<_, String>, no pub
# field on Host (scripts/check_surface.py; its tests first).
if ! out="$(python3 "$ROOT/scripts/check_surface_test.py" 2>&1)"; then
  printf '%s\n' "$out" >&2
  echo "structure: the surface checker's own tests fail (scripts/check_surface_test.py)" >&2
  exit 1
fi
surface=0
python3 "$ROOT/scripts/check_surface.py" "$ROOT" || surface=1
# docs/threat-model.md names real tests, and a row for every kind the gate settles and every
# method the gateway answers (scripts/check_threat_model.py; its tests first).
if ! out="$(python3 "$ROOT/scripts/check_threat_model_test.py" 2>&1)"; then
  printf '%s\n' "$out" >&2
  echo "structure: the threat-model checker's own tests fail (scripts/check_threat_model_test.py)" >&2
  exit 1
fi
python3 "$ROOT/scripts/check_threat_model.py" "$ROOT"
exit "$surface"
