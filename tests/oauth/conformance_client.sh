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
machine=""
if [ -n "$ctx" ]; then
  field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2],""))' "$ctx" "$1"; }
  id="$(field client_id)"; secret="$(field client_secret)"; key="$(field private_key_pem)"
  alg="$(field signing_algorithm)"
  case "${MCP_CONFORMANCE_SCENARIO:-}" in
    auth/client-credentials-*) machine=1 ;;
    auth/wif-jwt-bearer) machine=wif ;;
    auth/enterprise-managed-authorization) machine=ema ;;
  esac
  [ -n "$secret" ] && printf '%s\n' "$secret" | t secrets set conf-client-secret >&2
  # A PEM key is several lines: the keychain gets it whole from a file, as a user would paste it.
  [ -n "$key" ] && python3 - "$dir" "$key" <<'PY'
import sys, pathlib
pathlib.Path(sys.argv[1], "key.pem").write_text(sys.argv[2])
PY
  # Workload identity: the platform's token in a file, as Kubernetes or a cloud leaves it.
  [ "$machine" = wif ] && field valid_jwt > "$dir/workload-token"
  # Enterprise-managed: the user's ID token from the organisation's sign-in, in the keychain.
  [ "$machine" = ema ] && field idp_id_token | t secrets set conf-idp-id-token >&2
  python3 - "$dir/settings.json" "$id" "$secret" "$key" "$machine" "$alg" "$ctx" "$dir" <<'PY'
import json, sys
path, client_id, secret, key, machine, alg, ctx, folder = sys.argv[1:9]
ctx = json.loads(ctx)
doc = json.load(open(path))
s = doc.get("settings", doc)
for server in s["servers"]:
    if server["id"] == "conf":
        oauth = server.setdefault("oauth", {})
        oauth["clientId"] = client_id
        if secret:
            oauth["clientSecret"] = "${secret:conf-client-secret}"
        if key:
            oauth["privateKey"] = "${secret:conf-client-key}"
        if alg:
            oauth["signingAlgorithm"] = alg
        if machine == "1":
            oauth["grant"] = "clientCredentials"
        if machine == "wif":
            oauth["grant"] = "jwtBearer"
            oauth["assertionFile"] = folder + "/workload-token"
        if machine == "ema":
            oauth["grant"] = "enterpriseManaged"
if machine == "ema":
    s["identityProvider"] = {
        "issuer": ctx["idp_issuer"],
        "tokenEndpoint": ctx["idp_token_endpoint"],
        "clientId": ctx["idp_client_id"],
        "idToken": "${secret:conf-idp-id-token}",
    }
json.dump(doc, open(path, "w"), indent=2)
PY
  [ -n "$key" ] && t secrets set conf-client-key < "$dir/key.pem" >&2
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
# A machine client signs in by itself when it connects; a person's sign-in goes through the browser.
[ -z "$machine" ] && t servers login conf --wait 20 >&2
# A sign-in that has ended by the next use (the server moved to another authorization server):
# sign in again, as the message says.
t tools list >&2 || { t servers login conf --wait 20 >&2; t tools list >&2; }
tool="$(t tools list --json 2>/dev/null | python3 -c 'import json,sys; d=[t for t in json.load(sys.stdin) if t.get("server")=="conf" or t.get("serverId")=="conf"]; print(d[0]["name"] if d else "")' 2>/dev/null)"
echo "calling: $tool" >&2
[ -n "$tool" ] && t call "$tool" '{}' >&2
exit 0
