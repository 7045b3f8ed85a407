#!/usr/bin/env bash
# The official conformance suite's client under test for its scenarios without a sign-in
# (crates/cli/tests/client_conformance.rs runs it; the sign-in ones go through
# tests/oauth/conformance_client.sh): Toolgate's CLI ($TOOLGATE) on a throw-away data folder,
# driven as a user would. The scenario's server is added by its address and signed in to
# (Toolgate cannot know that a server needs no sign-in until it asks it; the attempt is given up
# after a few seconds, as a user would when no browser page comes); then its tools are listed
# and the calls the scenario is about are made with `toolgate call`, in a terminal (`script`)
# where a server asks a question, answered "send as is" (the form's defaults). The suite appends
# the server's address and says the scenario in MCP_CONFORMANCE_SCENARIO; the calls some
# scenarios want come in MCP_CONFORMANCE_CONTEXT.
set -uo pipefail
url="${@: -1}"
tg="${TOOLGATE:-toolgate}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/tg-conformance.XXXXXX")"
trap 'rm -rf "$dir"' EXIT
scenario="${MCP_CONFORMANCE_SCENARIO:-?}"
t() { "$tg" --data-dir "$dir" "$@"; }
# A call at a terminal, each of the server's questions answered with the form as it starts.
at_terminal() {
  local command
  command="$(printf '%q ' "$tg" --data-dir "$dir" call "$@")"
  printf 's\ns\ns\ns\n' | script -qec "$command" /dev/null >&2
}
echo "scenario: $scenario url: $url" >&2
# Its own id: the keychain is shared by every data folder of the user, and the sign-in
# scenarios (tests/oauth/conformance_client.sh) keep tokens under the id `conf`.
t servers add plain --url "$url" >&2
t servers remove everything >&2 2>/dev/null || true
timeout 3 "$tg" --data-dir "$dir" servers login plain --wait 2 >&2 2>&1 || true
t tools list --json > "$dir/tools.json" || true
tool_schema() {
  python3 -c 'import json,sys; print(json.dumps(next(t["inputSchema"] for t in json.load(open(sys.argv[1])) if t["name"]==sys.argv[2])))' "$dir/tools.json" "$1"
}
case "$scenario" in
  tools_call)
    t call add_numbers '{"a": 2, "b": 3}' >&2 ;;
  elicitation-sep1034-client-defaults)
    at_terminal test_client_elicitation_defaults '{}' ;;
  sse-retry)
    t call test_reconnection '{}' >&2 ;;
  sep-2322-client-request-state)
    at_terminal test_mrtr_echo_state '{}'
    at_terminal test_mrtr_no_state '{}'
    t call test_mrtr_unrelated '{}' >&2
    t call test_mrtr_no_result_type '{}' >&2 ;;
  http-standard-headers)
    t call test_headers '{}' >&2
    t call my-hyphenated-tool '{}' >&2 ;;
  http-custom-headers)
    python3 -c 'import json,os
for c in json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])["toolCalls"]:
    print(c["name"]); print(json.dumps(c["arguments"]))' |
      while IFS= read -r name && IFS= read -r args; do t call "$name" "$args" >&2; done ;;
  http-invalid-tool-headers)
    # Every tool the CLI lists is tried: the invalid ones must not reach the server.
    for name in $(python3 -c 'import json,sys; print(" ".join(t["name"] for t in json.load(open(sys.argv[1]))))' "$dir/tools.json"); do
      t call "$name" '{"region": "us-west1"}' >&2
    done ;;
  json-schema-2020-12-preservation)
    schema="$(tool_schema json_schema_2020_12_tool)"
    t call json_schema_echo "{\"schema\": $schema}" >&2 ;;
esac
exit 0
