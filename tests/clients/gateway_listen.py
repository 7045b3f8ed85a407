"""The official Python SDK client on the 2026-07-28 era, listening for list changes through
Toolgate's gateway (`subscriptions/listen`), as a host that keeps its tool list live does.

Usage: python gateway_listen.py <toolgate> <data dir> [resource URI]

Listens for tool list changes, or with a resource URI for that resource's updates. Prints
`listening` once the gateway acknowledged the subscription, then one JSON line for the first
event (its kind, and the URI of an update), then exits; fails after 60 s without one.
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
    resources = sys.argv[3:4]
    server = StdioServerParameters(command=toolgate, args=["--data-dir", data_dir, "connect", "--no-start"])
    info = Implementation(name="py-listener", version="1.0.0")
    async with Client(server, client_info=info, read_timeout_seconds=60) as client:
        with anyio.fail_after(60):
            wanted = {"resource_subscriptions": resources} if resources else {"tools_list_changed": True}
            async with client.listen(**wanted) as sub:
                print("listening", flush=True)
                async for event in sub:
                    uri = getattr(event, "uri", None)
                    print(json.dumps({"event": type(event).__name__, "uri": uri}), flush=True)
                    break


asyncio.run(main())
