#!/usr/bin/env python3
"""A local MCP Registry for Toolgate's registry-client tests. Standard library only (Python 3.11).

    server.py PORT FIXTURE.json [LOG.jsonl]

Listens on 127.0.0.1:PORT (PORT 0 picks a free port) and prints `listening on 127.0.0.1:<port>`
on stdout once it accepts connections. FIXTURE.json is a JSON list of entries shaped exactly as
the list response's items, `{"server": <server.json>, "_meta": {"io.modelcontextprotocol.registry/
official": {status, statusMessage?, statusChangedAt?, publishedAt, updatedAt, isLatest}}}`, so the
tests decide the data. With LOG.jsonl, every request is appended to it as one JSON line,
`{"method", "path", "query": {name: value}, "status"}`, so tests can check paging.

The responses follow the Registry API's OpenAPI document, docs/reference/api/openapi.yaml of
github.com/modelcontextprotocol/registry (spec version "2025-12-01", the copy at commit
145c2ec7c424d503a553a50c0efac6c48db407db), and where that document is silent, the official
registry's own handler (internal/api/handlers/v0/servers.go, internal/database/postgres.go):

GET /v0.1/servers  (also /v0/servers: the official registry serves both, identically)
    search          case-insensitive substring of the server's name or its description (the
                    document says "by name (substring match)"; the registry's newest code also
                    matches the description, see docs/reference/api/CHANGELOG.md at 5f1805d1).
                    `%` and `_` are literal.
    version         `latest`: only entries whose isLatest is true; any other value: only that
                    exact version. ABSENT: EVERY version of every server, not just the latest.
    include_deleted default false: entries with status `deleted` are left out. `updated_since`
                    turns it on; `include_deleted=false` together with `updated_since` is a 400.
    updated_since   RFC 3339; only entries whose updatedAt is later.
    limit           default 30, 1..100; outside that (or not an integer) a 422, as the registry's
                    validation answers.
    cursor          opaque, from metadata.nextCursor; a malformed one is a 400.
    Order: server name, then version (string order), as the registry sorts.
    Answer: {"servers": [entry...], "metadata": {"count": n, "nextCursor": "..."}}, nextCursor
    present only when more entries remain.
GET /v0.1/servers/{serverName}/versions/{version}
    serverName and version URL-encoded (`io.github.a%2Fb`); `latest` is the isLatest entry.
    A deleted entry counts as absent unless include_deleted=true. Answer: one entry; absent:
    404 {"error": "Server not found"}.
GET /v0.1/servers/{serverName}/versions
    Every version (deleted ones only with include_deleted=true), newest publishedAt first,
    {"servers": [...], "metadata": {"count": n}}; none: 404 {"error": "Server not found"}.
Anything else: 404 {"error": "Not found"}.
"""
import base64
import json
import sys
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlsplit

OFFICIAL = "io.modelcontextprotocol.registry/official"
PREFIXES = ("/v0.1/servers", "/v0/servers")
DEFAULT_LIMIT = 30
MAX_LIMIT = 100


class Reject(Exception):
    def __init__(self, status, body):
        super().__init__(status)
        self.status = status
        self.body = body


def official(entry):
    return (entry.get("_meta") or {}).get(OFFICIAL) or {}


def is_deleted(entry):
    return official(entry).get("status") == "deleted"


def key(entry):
    return (entry["server"]["name"], entry["server"]["version"])


def parse_time(text):
    """An RFC 3339 time (Python 3.11 reads the `Z` and fractional seconds); it must carry an offset."""
    stamp = datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        raise ValueError("no offset")
    return stamp


def flag(query, name):
    """A boolean query parameter: None when absent, else its value (422 when not a boolean)."""
    if name not in query:
        return None
    value = query[name].lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise Reject(422, {"title": "Unprocessable Entity", "status": 422,
                       "detail": "validation failed",
                       "errors": [{"message": "expected boolean", "location": "query." + name,
                                   "value": query[name]}]})


def encode_cursor(entry):
    raw = json.dumps(list(key(entry)), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(text):
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        name, version = json.loads(raw)
        if not isinstance(name, str) or not isinstance(version, str):
            raise ValueError
        return name, version
    except (ValueError, TypeError):
        raise Reject(400, {"error": "Invalid cursor parameter"}) from None


class Registry:
    def __init__(self, entries, log_path):
        for entry in entries:
            if "server" not in entry or "name" not in entry["server"] or "version" not in entry["server"]:
                raise SystemExit("fixture entry without server.name/server.version: %r" % entry)
        self.entries = sorted(entries, key=key)
        self.log_path = log_path
        self.log_lock = threading.Lock()

    def log(self, record):
        if not self.log_path:
            return
        with self.log_lock, open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    def list_servers(self, query):
        limit_text = query.get("limit")
        if limit_text is None:
            limit = DEFAULT_LIMIT
        else:
            try:
                limit = int(limit_text)
            except ValueError:
                limit = None
            if limit is None or not 1 <= limit <= MAX_LIMIT:
                raise Reject(422, {"title": "Unprocessable Entity", "status": 422,
                                   "detail": "validation failed",
                                   "errors": [{"message": "expected integer 1..%d" % MAX_LIMIT,
                                               "location": "query.limit", "value": limit_text}]})

        updated_since = None
        if query.get("updated_since"):
            try:
                updated_since = parse_time(query["updated_since"])
            except ValueError:
                raise Reject(400, {"error": "Invalid updated_since format: expected RFC3339 "
                                            "timestamp (e.g., 2025-08-07T13:15:04.280Z)"}) from None
        include_deleted = flag(query, "include_deleted")
        if updated_since is not None:
            if include_deleted is False:
                raise Reject(400, {"error": "Cannot set include_deleted=false when using "
                                            "updated_since (incremental sync requires deleted servers)"})
            include_deleted = True

        search = (query.get("search") or "").lower()
        version = query.get("version") or ""

        def keep(entry):
            server = entry["server"]
            if is_deleted(entry) and not include_deleted:
                return False
            if search and search not in server["name"].lower() \
                    and search not in (server.get("description") or "").lower():
                return False
            if version == "latest" and not official(entry).get("isLatest"):
                return False
            if version and version != "latest" and server["version"] != version:
                return False
            if updated_since is not None:
                stamp = official(entry).get("updatedAt")
                if not stamp or parse_time(stamp) <= updated_since:
                    return False
            return True

        matching = [e for e in self.entries if keep(e)]
        if query.get("cursor"):
            after = decode_cursor(query["cursor"])
            matching = [e for e in matching if key(e) > after]
        page = matching[:limit]
        metadata = {"count": len(page)}
        if len(matching) > limit:
            metadata["nextCursor"] = encode_cursor(page[-1])
        return {"servers": page, "metadata": metadata}

    def versions_of(self, name, include_deleted):
        found = [e for e in self.entries if e["server"]["name"] == name
                 and (include_deleted or not is_deleted(e))]
        return found

    def get_version(self, name, version, query):
        found = self.versions_of(name, flag(query, "include_deleted"))
        if version == "latest":
            found = [e for e in found if official(e).get("isLatest")]
        else:
            found = [e for e in found if e["server"]["version"] == version]
        if not found:
            raise Reject(404, {"error": "Server not found"})
        return found[0]

    def list_versions(self, name, query):
        found = self.versions_of(name, flag(query, "include_deleted"))
        if not found:
            raise Reject(404, {"error": "Server not found"})
        found = sorted(found, key=lambda e: official(e).get("publishedAt") or "", reverse=True)
        return {"servers": found, "metadata": {"count": len(found)}}

    def route(self, method, raw_path, query):
        if method != "GET":
            raise Reject(404, {"error": "Not found"})
        for prefix in PREFIXES:
            if raw_path == prefix:
                return self.list_servers(query)
            if raw_path.startswith(prefix + "/"):
                # Split the raw path, so an encoded `%2F` stays inside the name.
                parts = raw_path[len(prefix) + 1:].split("/")
                if len(parts) == 2 and parts[1] == "versions" and parts[0]:
                    return self.list_versions(unquote(parts[0]), query)
                if len(parts) == 3 and parts[1] == "versions" and parts[0] and parts[2]:
                    return self.get_version(unquote(parts[0]), unquote(parts[2]), query)
        raise Reject(404, {"error": "Not found"})


def make_handler(registry):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_any(self):
            parts = urlsplit(self.path)
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            try:
                status, body = 200, registry.route(self.command, parts.path, query)
            except Reject as reject:
                status, body = reject.status, reject.body
            payload = json.dumps(body).encode()
            registry.log({"method": self.command, "path": parts.path, "query": query,
                          "status": status})
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(status)
            ctype = "application/json" if status in (200, 400, 404) else "application/problem+json"
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_any

        def log_message(self, format, *args):
            pass

    return Handler


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: server.py PORT FIXTURE.json [LOG.jsonl]")
    port = int(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        entries = json.load(f)
    registry = Registry(entries, sys.argv[3] if len(sys.argv) == 4 else None)
    httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(registry))
    httpd.daemon_threads = True
    print("listening on 127.0.0.1:%d" % httpd.server_address[1], flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
