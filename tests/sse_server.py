"""A server on the older HTTP+SSE transport (protocol 2024-11-05) for the tests: the Python SDK's
FastMCP (PyPI `mcp`, pinned in mcp-servers/requirements.txt) run with its `sse` transport. Nothing
here but one tool; the transport is the SDK's own.

Usage: python sse_server.py PORT
"""
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("sse-test")


@server.tool()
def shout(text: str) -> str:
    """Returns the text in capitals."""
    return text.upper()


if __name__ == "__main__":
    server.run(transport="sse", host="127.0.0.1", port=int(sys.argv[1]))
