"""A 2026-07-28 MCP server on the official Python SDK (`mcp`, pinned in mcp-servers/requirements.txt)
for the tests: questions asked by multi-round requests (`input_required`, the answer and the
sealed `requestState` checked on the retry), a long call run as a task (the
`io.modelcontextprotocol/tasks` extension, written here on the SDK's extension API: tasks/get,
tasks/update, tasks/cancel), a tool list that changes and resource updates (told on `subscriptions/listen`), a
listen stream ended on request, a template resource and a prompt that ask first, and a tool that
reports the `_meta` it was sent, and one whose result carries every kind of content
(`rich_result`, from `rich_result.json`).

Everything it sees of note is appended to the file named by MODERN_LOG (one JSON object a line),
so a test can check what reached the server.

Run: python modern_server.py   (stdio)
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from datetime import datetime, timezone
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, InputRequiredResult, RequestParams

TASKS = "io.modelcontextprotocol/tasks"
LOG = os.environ.get("MODERN_LOG")
SIGN_IN_URL = os.environ.get("MODERN_SIGNIN_URL", "https://accounts.example.com/signin?session=abc")


def log(**entry: Any) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def form(message: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        },
    }


def answer(ctx: Context, key: str) -> dict[str, Any] | None:
    responses = ctx.input_responses or {}
    value = responses.get(key)
    if value is None:
        return None
    return value if isinstance(value, dict) else json.loads(json.dumps(value, default=lambda o: o.model_dump(by_alias=True)))


class Tasks(Extension):
    """The tasks extension for one tool, `slow_report`: its calls become tasks."""

    identifier = TASKS

    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}

    def public(self, task: dict[str, Any]) -> dict[str, Any]:
        shown = {k: v for k, v in task.items() if not k.startswith("_")}
        return shown

    async def run(self, task_id: str, steps: int, ask: bool) -> None:
        task = self.tasks[task_id]
        include = None
        for step in range(1, steps + 1):
            await asyncio.sleep(0.15)
            if task["status"] == "cancelled":
                return
            if ask and step == max(1, steps // 2) and include is None:
                task["status"] = "input_required"
                task["statusMessage"] = "waiting for your answer"
                task["inputRequests"] = {
                    "appendix": form(
                        "Include the appendix in the report?",
                        {"include": {"type": "boolean", "title": "Include the appendix"}},
                        ["include"],
                    )
                }
                while task["status"] == "input_required":
                    await asyncio.sleep(0.05)
                if task["status"] == "cancelled":
                    return
                include = task["_answers"].get("appendix", {}).get("content", {}).get("include")
            task["status"] = "working"
            task["statusMessage"] = f"step {step} of {steps}"
            task["lastUpdatedAt"] = now()
        task["status"] = "completed"
        task["statusMessage"] = "done"
        task["result"] = {
            "content": [{"type": "text", "text": f"Report of {steps} steps; appendix: {include}"}],
            "isError": False,
        }
        log(event="task-completed", taskId=task_id)

    async def intercept_tool_call(self, params: Any, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        if params.name != "slow_report":
            return await call_next(ctx)
        arguments = params.arguments or {}
        task_id = str(uuid.uuid4())
        self.tasks[task_id] = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": "starting",
            "createdAt": now(),
            "lastUpdatedAt": now(),
            "ttlMs": 60000,
            "pollIntervalMs": 100,
            "_answers": {},
        }
        asyncio.get_running_loop().create_task(
            self.run(task_id, int(arguments.get("steps", 5)), bool(arguments.get("ask", False)))
        )
        log(event="task-created", taskId=task_id)
        return {"resultType": "task", **self.public(self.tasks[task_id])}

    async def get(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        task = self.tasks[params.taskId]
        shown = self.public(task)
        if task["status"] != "input_required":
            shown.pop("inputRequests", None)
        return {"resultType": "complete", **shown}

    async def update(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        task = self.tasks[params.taskId]
        log(event="task-update", taskId=params.taskId, keys=sorted(params.inputResponses))
        task["_answers"].update(params.inputResponses)
        task.pop("inputRequests", None)
        task["status"] = "working"
        return {"resultType": "complete"}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        task = self.tasks[params.taskId]
        task["status"] = "cancelled"
        task["statusMessage"] = "cancelled by the client"
        log(event="task-cancelled", taskId=params.taskId)
        return {"resultType": "complete"}

    def methods(self) -> list[MethodBinding]:
        class TaskParams(RequestParams):
            taskId: str

        class UpdateParams(RequestParams):
            taskId: str
            inputResponses: dict[str, Any]

        return [
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", UpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        ]


mcp = MCPServer("modern-test-server", extensions=[Tasks()])


@mcp.tool(description="Books a table; asks the guest's name first")
async def book_table(people: int, ctx: Context) -> Any:
    guest = answer(ctx, "guest")
    if guest is None:
        log(event="book-asked", state=None)
        return InputRequiredResult(
            input_requests={
                "guest": form(
                    f"Whose name is the table for {people} under?",
                    {"name": {"type": "string", "title": "Name", "minLength": 1}},
                    ["name"],
                )
            },
            request_state=f"people={people}",
        )
    log(event="book-retried", state=ctx.request_state, action=guest.get("action"))
    if guest.get("action") != "accept":
        return f"No booking: the question was answered with {guest.get('action')}"
    return f"Booked a table for {people} under {guest['content']['name']} (state {ctx.request_state})"


@mcp.tool(description="Signs in on the service's own page (a URL question)")
async def sign_in(ctx: Context) -> Any:
    reply = answer(ctx, "signin")
    if reply is None:
        return InputRequiredResult(
            input_requests={
                "signin": {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "message": "Sign in to the example service", "url": SIGN_IN_URL},
                }
            },
            request_state="signin",
        )
    log(event="signin", action=reply.get("action"))
    return f"sign-in answered: {reply.get('action')}"


@mcp.tool(description="A long report, run as a task")
async def slow_report(steps: int = 5, ask: bool = False) -> str:
    # Reached only by a client without the tasks extension: run it in line.
    await asyncio.sleep(0.15 * steps)
    return f"Report of {steps} steps (no task)"


@mcp.tool(description="Says which _meta the call carried, besides the protocol's own keys")
async def whoami(ctx: Context) -> str:
    meta = ctx.request_context.meta
    raw = meta.model_dump(by_alias=True, exclude_none=True) if hasattr(meta, "model_dump") else dict(meta or {})
    protocol = ("progressToken", "progress_token")
    own = {k: v for k, v in raw.items() if not k.startswith("io.modelcontextprotocol/") and k not in protocol}
    log(event="whoami", meta=own)
    return json.dumps(own, sort_keys=True)


# Every kind of content a result can carry, from one file the tests compare against.
RICH = json.loads(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rich_result.json"), encoding="utf-8").read())


@mcp.tool(description="Answers with every kind of content: text, an image, a resource link, an embedded resource, structured content and _meta")
async def rich_result() -> CallToolResult:
    return CallToolResult.model_validate(RICH)


@mcp.tool(description="Adds a tool named NAME and says the list changed")
async def add_tool(name: str, ctx: Context) -> str:
    def added() -> str:
        return f"I am {name}"

    mcp.add_tool(added, name=name, description=f"added at run time as {name}")
    await ctx.notify_tools_changed()
    return f"added {name}"


@mcp.tool(description="Ends every subscriptions/listen stream gracefully")
async def end_listen() -> str:
    entry = mcp._lowlevel_server._request_handlers["subscriptions/listen"]
    handler = getattr(entry, "handler", None) or entry[1]
    handler.close()
    log(event="listen-closed")
    return "closed"


@mcp.tool(description="Says the resource at URI was updated, on subscriptions/listen")
async def touch(uri: str, ctx: Context) -> str:
    await ctx.notify_resource_updated(uri)
    log(event="touched", uri=uri)
    return f"touched {uri}"


@mcp.resource("notes://{topic}", description="A note on a topic")
def note(topic: str) -> str:
    return f"Notes on {topic}: nothing yet."


@mcp.prompt(description="Plans a trip to a city")
def plan_trip(city: str, days: str = "2") -> str:
    return f"Plan a {days}-day trip to {city}."


if __name__ == "__main__":
    mcp.run()
