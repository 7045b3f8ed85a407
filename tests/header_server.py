"""A Streamable HTTP server of the 2026-07-28 era for the tests: the Python SDK's MCPServer (PyPI
`mcp`) with two tools whose inputs carry `x-mcp-header` annotations (SEP-2243), one valid
(`Region`, which a client mirrors into an `Mcp-Param-Region` header) and one invalid (a header
name with a space). Each call's Mcp-* request headers are echoed back by `where`.

Usage: python header_server.py PORT
"""
import sys
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("header-test")


@server.tool()
def where(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], ctx: Context) -> str:
    """Says which region the call was routed by."""
    request = ctx.request_context.request
    headers = {k.lower(): v for k, v in request.headers.items()} if request is not None else {}
    seen = {k: v for k, v in headers.items() if k.startswith("mcp-")}
    return f"region={region} headers={sorted(seen.items())}"


@server.tool()
def broken(zone: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Zone"})]) -> str:
    """A tool whose header annotation is invalid (made so below)."""
    return zone


# The SDK refuses an invalid annotation when a tool is registered, so the misbehaving server is
# made after the fact: the schema it lists names a header that is not an HTTP token.
server._tool_manager.get_tool("broken").parameters["properties"]["zone"]["x-mcp-header"] = "Bad Name"


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
