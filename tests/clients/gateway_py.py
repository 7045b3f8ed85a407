"""The official Python SDK client (`mcp` on PyPI, pinned in mcp-servers/requirements.txt)
connected to Toolgate's gateway as a host connects: it launches `toolgate connect` over stdio.
Its `Client` probes `server/discover` first, so this is the 2026-07-28 era.

Usage: python gateway_py.py <toolgate> <data dir> <root dir> <profile>

Prints one JSON line per step, as gateway_ts.cjs does.
"""

import asyncio
import json
import os
import sys

from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp_types import Implementation


def say(value):
    print(json.dumps(value), flush=True)


def text(result):
    return "".join(getattr(c, "text", "") or "" for c in result.content)


async def main():
    toolgate, data_dir, root, profile = sys.argv[1:5]
    server = StdioServerParameters(
        command=toolgate,
        args=["--data-dir", data_dir, "connect", "--no-start", "--profile", profile],
    )
    info = Implementation(name="py-sdk-client", version="1.0.0")
    async with Client(server, client_info=info, read_timeout_seconds=120) as client:
        say({"step": "era", "version": client.session.protocol_version})
        tools = await client.list_tools()
        say({"step": "list", "tools": sorted(t.name for t in tools.tools)})
        for step, name, args in [
            ("echo", "echo", {"message": "through the gateway"}),
            ("denied", "write_file", {"path": os.path.join(root, "denied.txt"), "content": "no"}),
            ("approved", "write_file", {"path": os.path.join(root, "approved.txt"), "content": "yes"}),
        ]:
            result = await client.call_tool(name, args)
            say({"step": step, "isError": bool(result.is_error), "text": text(result)})


asyncio.run(main())
