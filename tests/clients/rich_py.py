"""The official Python SDK client (`mcp` on PyPI) calling one tool through Toolgate's gateway
(`toolgate connect`), printing the whole result as the SDK received it: one JSON object.

Usage: python rich_py.py <toolgate> <data dir> <tool>
"""

import asyncio
import json
import sys

from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp_types import Implementation


async def main():
    toolgate, data_dir, tool = sys.argv[1:4]
    server = StdioServerParameters(
        command=toolgate,
        args=["--data-dir", data_dir, "connect", "--no-start", "--profile", "rich-client"],
    )
    info = Implementation(name="rich-client", version="1.0.0")
    async with Client(server, client_info=info, read_timeout_seconds=120) as client:
        tools = await client.list_tools()
        name = next(t.name for t in tools.tools if t.name.endswith(tool))
        result = await client.call_tool(name, {})
        print(json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json")), flush=True)


asyncio.run(main())
