"""The official Python SDK client on the 2026-07-28 era, listening for list changes through
Toolgate's gateway (`subscriptions/listen`), as a host that keeps its tool list live does.

Usage: python gateway_listen.py <toolgate> <data dir>

Prints `listening` once the gateway acknowledged the subscription, then one JSON line for the
first change event, then exits; fails after 60 s without one.
"""

import asyncio
import json
import sys

import anyio
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp_types import Implementation


async def main():
    toolgate, data_dir = sys.argv[1:3]
    server = StdioServerParameters(command=toolgate, args=["--data-dir", data_dir, "connect", "--no-start"])
    info = Implementation(name="py-listener", version="1.0.0")
    async with Client(server, client_info=info, read_timeout_seconds=60) as client:
        with anyio.fail_after(60):
            async with client.listen(tools_list_changed=True) as sub:
                print("listening", flush=True)
                async for event in sub:
                    print(json.dumps({"event": type(event).__name__}), flush=True)
                    break


asyncio.run(main())
