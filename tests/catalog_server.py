#!/usr/bin/env python3
"""An MCP server with a large catalog of tools, for Toolgate's tool-search tests and benchmarks
(stdio, newline-delimited JSON-RPC, 2025-11-25 `initialize`). Standard library only.

    catalog_server.py [COUNT] [OFFSET]

Lists COUNT tools (default 500), the generated tools number OFFSET to OFFSET+COUNT-1 of one
fixed, ordered list: every verb of VERBS with every thing of THINGS (1,200 in all), so servers
given different offsets have different tools. Each has a name (`create_invoice`), a description
saying what it does to what, and an input schema of three described properties, about the size
of a real server's tool. A few HANDMADE tools come first, each with a purpose a test can search
for in words its name does not use.

Calling any tool answers `<name> ran with <arguments>`; stderr gets `called <name> <arguments>`
for each call, which tests read to prove what reached the server.
"""
import json
import sys

VERSION = "2025-11-25"

HANDMADE = [
    ("convert_temperature", "Converts a temperature between Celsius and Fahrenheit.",
     {"value": "The temperature to convert", "to": "The unit wanted: celsius or fahrenheit"}),
    ("count_words", "Counts the words, lines and characters of a text.",
     {"text": "The text to measure"}),
    ("shorten_url", "Makes a long web address short, for sharing.",
     {"url": "The long address"}),
    ("moon_phase", "Tells the phase of the moon on a given date.",
     {"date": "The day, as YYYY-MM-DD"}),
    ("translate_morse", "Turns text into Morse code dots and dashes, or back.",
     {"text": "Letters, or Morse code", "direction": "to-morse or from-morse"}),
]

VERBS = ["create", "delete", "update", "list", "get", "archive", "export", "import", "search",
         "share", "rename", "copy", "move", "restore", "validate", "merge", "tag", "lock",
         "unlock", "publish", "schedule", "approve", "reject", "assign", "summarize", "translate",
         "duplicate", "preview", "sync", "audit"]
THINGS = ["invoice", "customer", "order", "ticket", "project", "document", "spreadsheet",
          "calendar_event", "contact", "repository", "branch", "pull_request", "issue", "deployment",
          "container", "database", "table", "backup", "user", "group", "permission", "report",
          "dashboard", "alert", "incident", "playlist", "photo", "album", "note", "task",
          "reminder", "email", "message", "channel", "meeting", "invoice_template", "product",
          "shipment", "warehouse", "budget"]
PHRASES = {
    "create": "Creates a new {t} with the given fields.",
    "delete": "Deletes a {t} for good.",
    "update": "Changes fields of an existing {t}.",
    "list": "Lists the {t} items, newest first.",
    "get": "Reads one {t} by its id.",
    "archive": "Moves a {t} to the archive.",
    "export": "Exports a {t} as a file.",
    "import": "Imports a {t} from a file.",
    "search": "Finds {t} items matching words.",
    "share": "Shares a {t} with other people.",
    "rename": "Gives a {t} a new name.",
    "copy": "Makes a copy of a {t}.",
    "move": "Moves a {t} to another place.",
    "restore": "Brings back a deleted {t}.",
    "validate": "Checks a {t} for errors.",
    "merge": "Combines two {t} items into one.",
    "tag": "Adds labels to a {t}.",
    "lock": "Prevents changes to a {t}.",
    "unlock": "Allows changes to a locked {t} again.",
    "publish": "Makes a {t} public.",
    "schedule": "Plans a {t} for a later time.",
    "approve": "Marks a {t} as approved.",
    "reject": "Marks a {t} as rejected, with a reason.",
    "assign": "Gives a {t} to a person.",
    "summarize": "Writes a short summary of a {t}.",
    "translate": "Translates a {t} into another language.",
    "duplicate": "Creates an identical {t} next to the original.",
    "preview": "Shows how a {t} will look.",
    "sync": "Brings a {t} up to date with its source.",
    "audit": "Lists who changed a {t} and when.",
}


def generated():
    for verb in VERBS:
        for thing in THINGS:
            words = thing.replace("_", " ")
            yield (f"{verb}_{thing}", PHRASES[verb].format(t=words),
                   {"id": f"The {words} to work on",
                    "fields": f"Values to set on the {words}, as an object",
                    "note": "Why, for the change log"})


def tool(name, description, properties):
    return {
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {p: {"type": "string", "description": d} for p, d in properties.items()},
            "required": [next(iter(properties))],
        },
    }


def catalog(count, offset):
    every = HANDMADE + list(generated())
    return [tool(*t) for t in every[offset:offset + count]]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    offset = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    tools = catalog(count, offset)
    names = {t["name"] for t in tools}
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None or method is None:
            continue
        params = msg.get("params") or {}
        if method == "initialize":
            result = {"protocolVersion": VERSION, "capabilities": {"tools": {}},
                      "serverInfo": {"name": "catalog-server", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "ping":
            result = {}
        elif method == "tools/call" and params.get("name") in names:
            args = json.dumps(params.get("arguments") or {}, sort_keys=True)
            sys.stderr.write(f"called {params['name']} {args}\n")
            sys.stderr.flush()
            result = {"content": [{"type": "text", "text": f"{params['name']} ran with {args}"}]}
        else:
            send({"jsonrpc": "2.0", "id": rid,
                  "error": {"code": -32601, "message": f"Method not found: {method}"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
