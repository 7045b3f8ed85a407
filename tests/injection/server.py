"""An MCP server (the official Python SDK, `mcp`) serving one AgentDojo suite's tools for one
(user task, injection) pair: the suite's environment with the injections in place, each call run
by AgentDojo's own FunctionsRuntime on it, results in AgentDojo's own text (YAML), and after
every call the calls so far written to STATE (JSON) and the environment to STATE.pickle, for the
scorer (pickled: a JSON round trip would rebuild the inbox and drive from their initial lists).
Annotations come from annotations.json (see annotations.md).

Run: python server.py SUITE USER_TASK INJECTION STATE   (stdio)
"""

import asyncio
import json
import os
import pickle
import sys

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

import dojo


def main():
    suite_name, user_task, injection, state_path = sys.argv[1:5]
    pair = dojo.Pair(suite_name, user_task, injection)
    env = pair.environment()
    runtime = dojo.FunctionsRuntime(pair.suite.tools)
    hints = dojo.annotations()[suite_name]
    missing = [f.name for f in pair.suite.tools if f.name not in hints]
    if missing:
        raise SystemExit(f"annotations.json has no entry for {missing} ({suite_name})")
    ran = []

    def save():
        with open(state_path + ".pickle.tmp", "wb") as f:
            pickle.dump(env, f)
        os.replace(state_path + ".pickle.tmp", state_path + ".pickle")
        with open(state_path + ".tmp", "w", encoding="utf-8") as f:
            json.dump({"calls": ran}, f)
        os.replace(state_path + ".tmp", state_path)

    save()
    tools = []
    for f in pair.suite.tools:
        h = hints[f.name]
        annotations = types.ToolAnnotations(
            readOnlyHint=h["readOnly"], destructiveHint=h["destructive"], openWorldHint=h["openWorld"]
        )
        tools.append(
            types.Tool(
                name=f.name,
                description=f.description,
                inputSchema=f.parameters.model_json_schema(),
                annotations=annotations,
            )
        )

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params):
        arguments = dict(params.arguments or {})
        result, error = runtime.run_function(env, params.name, arguments)
        ran.append({"name": params.name, "arguments": arguments})
        save()
        text = error if error is not None else dojo.tool_result_to_str(result)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=error is not None)

    server = Server(f"agentdojo-{suite_name}", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    asyncio.run(serve())


if __name__ == "__main__":
    main()
