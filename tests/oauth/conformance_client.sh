#!/usr/bin/env bash
# The official conformance suite's client under test (crates/cli/tests/auth_conformance.rs runs
# it): Toolgate's CLI ($TOOLGATE) on a throw-away data folder, as a user would drive it: the
# scenario's server added by its address, signed in to with the stand-in browser (`xdg-open` in
# this folder, which follows the authorization URL over HTTP), its tools listed and one called.
# The suite appends the server's address and says the scenario in MCP_CONFORMANCE_SCENARIO; a
# pre-registered client's id and secret come in MCP_CONFORMANCE_CONTEXT and go where a user puts
# them (the secret in the keychain, referred to from the server's oauth settings).
set -uo pipefail
url="${@: -1}"
tg="${TOOLGATE:-toolgate}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/tg-conformance.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
here="$(cd "$(dirname "$0")" && pwd)"
export PATH="$here:$PATH"
t() { "$tg" --data-dir "$dir" "$@"; }
echo "scenario: ${MCP_CONFORMANCE_SCENARIO:-?} url: $url" >&2
t servers add conf --url "$url" >&2
t servers remove everything >&2 2>/dev/null || true
ctx="${MCP_CONFORMANCE_CONTEXT:-}"
if [ -n "$ctx" ]; then
  id="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("client_id",""))' "$ctx")"
  secret="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("client_secret",""))' "$ctx")"
  if [ -n "$secret" ]; then
    printf '%s\n' "$secret" | t secrets set conf-client-secret >&2
    python3 - "$dir/settings.json" "$id" <<'PY'
import json, sys
path, client_id = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
s = doc.get("settings", doc)
for server in s["servers"]:
    if server["id"] == "conf":
        server.setdefault("oauth", {}).update({"clientId": client_id, "clientSecret": "${secret:conf-client-secret}"})
json.dump(doc, open(path, "w"), indent=2)
PY
  fi
fi
if [ "${MCP_CONFORMANCE_SCENARIO:-}" = "auth/basic-cimd" ]; then
  # The address this client's metadata document is published at, as a user configures it.
  python3 - "$dir/settings.json" <<'PY'
import json, sys
path = sys.argv[1]
doc = json.load(open(path)); s = doc.get("settings", doc)
for server in s["servers"]:
    if server["id"] == "conf":
        server.setdefault("oauth", {})["clientMetadataUrl"] = "https://conformance-test.local/client-metadata.json"
json.dump(doc, open(path, "w"), indent=2)
PY
fi
t servers login conf --wait 20 >&2
# A sign-in that has ended by the next use (the server moved to another authorization server):
# sign in again, as the message says.
t tools list >&2 || { t servers login conf --wait 20 >&2; t tools list >&2; }
tool="$(t tools list --json 2>/dev/null | python3 -c 'import json,sys; d=[t for t in json.load(sys.stdin) if t.get("server")=="conf" or t.get("serverId")=="conf"]; print(d[0]["name"] if d else "")' 2>/dev/null)"
echo "calling: $tool" >&2
[ -n "$tool" ] && t call "$tool" '{}' >&2
exit 0
