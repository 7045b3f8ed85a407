#!/usr/bin/env bash
# The window's script speed, with JavaScriptCore's JIT (as the app runs) and without it
# (JSC_useJIT=0, which would save 14 MiB of idle memory: BENCHMARKS.md §4). The page
# (ui/bench/markdown-stream) re-renders a long reply through the chat's own Markdown renderer,
# one render and layout per chunk, as the chat does while a reply streams in. It runs in
# WebKitGTK's MiniBrowser (shipped with libwebkit2gtk-4.1-0, the library the app loads), under
# Xvfb, alternating the two set-ups for ROUNDS rounds (default 3), and prints a table with the
# ratio taken in the same run. Run it after the README's set-up, on a quiet machine.
#
#   scripts/window-bench.sh [ROUNDS]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${1:-3}"
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "error: ROUNDS must be a whole number above 0, not '$ROUNDS'" >&2; exit 2 ;; esac

if [ -z "${DISPLAY:-}" ]; then
  for needed in xvfb-run dbus-run-session; do
    command -v "$needed" >/dev/null || { echo "error: $needed is missing: run the README's set-up first (scripts/dev.sh test)" >&2; exit 1; }
  done
  exec dbus-run-session -- xvfb-run -a -s "-screen 0 1280x900x24" "$0" "$ROUNDS"
fi

browser="$(pkg-config --variable=libdir webkit2gtk-4.1 2>/dev/null)/webkit2gtk-4.1/MiniBrowser"
[ -x "$browser" ] || { echo "error: WebKitGTK's MiniBrowser is not at '$browser': install libwebkit2gtk-4.1-dev (the README's set-up does)" >&2; exit 1; }
[ -x "$ROOT/ui/node_modules/.bin/vite" ] || { echo "error: the UI's packages are missing: run the README's set-up first (scripts/dev.sh test)" >&2; exit 1; }

work="$(mktemp -d)"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

(cd "$ROOT/ui" && node_modules/.bin/vite build bench/markdown-stream --config vite.config.ts \
  --outDir "$work/page" --emptyOutDir --base ./ --logLevel warn)

# The page is served over HTTP on a free port (module scripts do not load from file://).
python3 - "$work/page" >"$work/port" 2>/dev/null <<'PY' &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
handler.log_message = lambda *a: None
with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()
PY
server=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "error: python3 could not serve the page on 127.0.0.1" >&2; exit 1; }
url="http://127.0.0.1:$(cat "$work/port")/index.html"

# One run: prints the page's line, or fails saying what the browser wrote.
run() {
  local out="$work/browser.log" line=""
  env "$@" XDG_CACHE_HOME="$work/cache" timeout 300 "$browser" \
    --enable-write-console-messages-to-stdout=true "$url" >"$out" 2>&1 &
  local pid=$!
  for _ in $(seq 600); do
    line="$(grep -o 'WINDOW-BENCH .*' "$out" | head -1 || true)"
    [ -n "$line" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [ -z "$line" ]; then
    echo "error: the page printed no result with '$*'; the browser wrote:" >&2
    tail -20 "$out" >&2
    exit 1
  fi
  echo "$line"
}

field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
echo "| round | JIT | total for the renders | median render | 95th percentile | slowest |"
echo "|---:|---|---:|---:|---:|---:|"
on_totals=() off_totals=()
for round in $(seq "$ROUNDS"); do
  for jit in 1 0; do
    line="$(run JSC_useJIT=$jit)"
    total="$(field total_ms "$line")"
    if [ "$jit" = 1 ]; then on_totals+=("$total"); name="on (as the app runs)"; else off_totals+=("$total"); name="off (JSC_useJIT=0)"; fi
    printf '| %d | %s | %s ms | %s ms | %s ms | %s ms |\n' "$round" "$name" "$total" \
      "$(field median_ms "$line")" "$(field p95_ms "$line")" "$(field max_ms "$line")"
  done
done
echo
echo "$line" | sed 's/.*chars=\([0-9]*\) renders=\([0-9]*\).*/A reply of \1 characters, rendered \2 times as it grows./'
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
on="$(median "${on_totals[@]}")" off="$(median "${off_totals[@]}")"
awk -v on="$on" -v off="$off" 'BEGIN { printf "Median total: JIT on %d ms, off %d ms: off takes %.1fx as long.\n", on, off, off / on }'
