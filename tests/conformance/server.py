"""The test server behind Toolgate's HTTP door in the conformance test (crates/cli/tests/
door_conformance.rs): a Streamable HTTP MCP server on the official Python SDK (`mcp`, pinned in
mcp-servers/requirements.txt) with the tools, resources and prompts the official conformance
suite's server scenarios (`@modelcontextprotocol/conformance server`) call by name. Written for
Toolgate from the scenarios' own requirements (`conformance list` and each scenario's
description); the suite's reference server lives only in its GitHub repository.

The same server is tested twice: once directly, once through Toolgate (as a remote server of
Toolgate's), and every scenario that passes directly must pass through the door.

It speaks both protocol eras. A question to the client during a call (sampling, elicitation) is
a request on the call's own stream at 2025-11-25, and the call's `input_required` result at
2026-07-28 (that era forbids a server's requests), answered when the call is sent again.

Everything it does for a client is appended to the file named by CONFORMANCE_LOG (one JSON
object a line: each tool call, each question it asked and its answer), so the test can prove
the calls really ran: a gate that refused them would still pass two scenarios, which only
look for an error result with text.

Run: python server.py PORT   (serves http://127.0.0.1:PORT/mcp, both protocol eras)
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import PromptsListChanged, ToolsListChanged

LOG = os.environ.get("CONFORMANCE_LOG")
NAME = "toolgate-conformance-server"
# `subscriptions/listen` at 2026-07-28: list changes published here reach every listener.
BUS = InMemorySubscriptionBus()
# The lists the trigger tools change.
DYNAMIC = {"tool": False, "prompt": False}

# A 1x1 PNG and a few samples of silent 8 kHz WAV: content the image and audio scenarios accept.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cfc0000003010100c9fe92ef"
        "0000000049454e44ae426082"
    )
).decode()
WAV = base64.b64encode(
    b"RIFF" + (36 + 8).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (8000).to_bytes(4, "little") + (1).to_bytes(2, "little") + (8).to_bytes(2, "little")
    + b"data" + (8).to_bytes(4, "little") + bytes([128] * 8)
).decode()

# A tool whose input schema uses the 2020-12 vocabulary the json-schema-2020-12 scenario
# looks for, each keyword where it expects it.
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or NO_ARGUMENTS}


def string_arguments(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {n: {"type": "string"} for n in names},
        "required": list(names),
    }


TOOLS = [
    tool("test_simple_text", "Answers with one text item"),
    tool("test_image_content", "Answers with a PNG image"),
    tool("test_audio_content", "Answers with a WAV sound"),
    tool("test_embedded_resource", "Answers with an embedded text resource"),
    tool("test_multiple_content_types", "Answers with text, an image and a resource"),
    tool("test_tool_with_logging", "Logs three messages while it runs"),
    tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100"),
    tool("test_error_handling", "Always fails, as a tool error"),
    tool("test_reconnection", "Closes its response stream mid-call, then answers"),
    tool("test_sampling", "Asks the client's model to answer a prompt", string_arguments("prompt")),
    tool("test_elicitation", "Asks the user for a user name and an e-mail address", string_arguments("message")),
    tool("test_elicitation_sep1034_defaults", "Asks the user with a default for every field type"),
    tool("test_elicitation_sep1330_enums", "Asks the user with every kind of choice list"),
    tool("json_schema_2020_12_tool", "Takes input described with JSON Schema 2020-12", SCHEMA_2020_12),
    # 2026-07-28 (multi-round requests, the stateless wire's checks).
    tool("test_input_required_result_elicitation", "Asks the user's name first (input_required)"),
    tool("test_input_required_result_sampling", "Asks the client's model first (input_required)"),
    tool("test_input_required_result_list_roots", "Asks for the client's roots first (input_required)"),
    tool("test_input_required_result_request_state", "Asks with a request state to echo"),
    tool("test_input_required_result_multiple_inputs", "Asks three questions at once"),
    tool("test_input_required_result_multi_round", "Asks twice, one question a round"),
    tool("test_input_required_result_tampered_state", "Refuses a request state it did not seal"),
    tool("test_input_required_result_capabilities", "Asks only what the client declared it can answer"),
    tool("test_missing_capability", "Needs the client's sampling capability"),
    tool("test_streaming_elicitation", "Asks the user something, as input_required"),
    tool("test_logging_tool", "Logs a message, if the request asked for logs"),
    tool("test_trigger_tool_change", "Adds or removes a tool"),
    tool("test_trigger_prompt_change", "Adds or removes a prompt"),
]

RESOURCES = [
    {"uri": "test://static-text", "name": "static-text", "description": "A text resource", "mimeType": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "description": "A PNG image", "mimeType": "image/png"},
    {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"},
]

TEMPLATES = [
    {
        "uriTemplate": "test://template/{id}/data",
        "name": "template-data",
        "description": "Data for an id",
        "mimeType": "application/json",
    }
]

PROMPTS = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments"},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt that repeats its two arguments",
        "arguments": [
            {"name": "arg1", "description": "First argument", "required": True},
            {"name": "arg2", "description": "Second argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt that embeds the resource it is given",
        "arguments": [{"name": "resourceUri", "description": "The resource's URI", "required": True}],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
    {"name": "test_input_required_result_prompt", "description": "A prompt that asks for its context first"},
]


def log(**entry: Any) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def result(*content: dict[str, Any], error: bool = False) -> types.CallToolResult:
    return types.CallToolResult.model_validate({"content": list(content), "isError": error})


class NeedInput(Exception):
    """A 2026-07-28 call that must first ask the client: answered as `input_required`."""

    def __init__(self, key: str, method: str, params: dict[str, Any]) -> None:
        super().__init__(key)
        self.request = {key: {"method": method, "params": params}}


def plain(value: Any) -> Any:
    return value.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(value, "model_dump") else value


async def ask(ctx: Any, call: types.CallToolRequestParams, method: str, params: dict[str, Any]) -> Any:
    """A question to the client, sent exactly as written: on the call's own stream at
    2025-11-25, as the call's `input_required` result at 2026-07-28 (that era forbids a server's
    requests), its answer read from the retried call."""
    if ctx.protocol_version >= "2026-07-28":
        answer = plain((call.input_responses or {}).get("question"))
        if answer is None:
            raise NeedInput("question", method, params)
    else:
        answer = await ctx.session._request_outbound.send_raw_request(method, params, None)
    log(event="asked", method=method, answer=answer, protocol=ctx.protocol_version)
    return answer


def progress_token(params: types.CallToolRequestParams) -> Any:
    meta = params.meta or {}
    return meta.get("progress_token", meta.get("progressToken"))


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
    try:
        return await run_tool(ctx, params)
    except NeedInput as needed:
        return types.InputRequiredResult.model_validate({"inputRequests": needed.request})


async def run_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, arguments = params.name, params.arguments or {}
    if not params.input_responses:
        log(event="call", tool=name, arguments=arguments, protocol=ctx.protocol_version)
    if name == "test_simple_text":
        return result(text("This is a simple text response for testing."))
    if name == "test_image_content":
        return result({"type": "image", "data": PNG, "mimeType": "image/png"})
    if name == "test_audio_content":
        return result({"type": "audio", "data": WAV, "mimeType": "audio/wav"})
    if name == "test_embedded_resource":
        return result(embedded("test://embedded-resource", "This is an embedded resource content."))
    if name == "test_multiple_content_types":
        return result(
            text("Multiple content types test:"),
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            embedded("test://mixed-content-resource", json.dumps({"test": "data", "value": 123})),
        )
    if name == "test_tool_with_logging":
        for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
            await ctx.session.send_log_message("info", message, related_request_id=ctx.request_id)
            await asyncio.sleep(0.05)
        return result(text("Tool with logging executed successfully"))
    if name == "test_tool_with_progress":
        token = progress_token(params)
        for done in (0, 50, 100):
            if token is not None:
                await ctx.session.send_progress_notification(
                    token, done, 100, related_request_id=ctx.request_id
                )
            await asyncio.sleep(0.05)
        return result(text(f"Tool with progress executed successfully (token {token})"))
    if name == "test_error_handling":
        return result(text("This tool intentionally returns an error for testing"), error=True)
    if name == "test_reconnection":
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()
        await asyncio.sleep(0.2)
        return result(text("Reconnection test completed successfully"))
    if name == "test_sampling":
        answer = await ask(
            ctx,
            params,
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": text(arguments.get("prompt", ""))}],
                "maxTokens": 100,
            },
        )
        said = answer.get("content", {})
        said = said.get("text") if isinstance(said, dict) else json.dumps(said)
        return result(text(f"LLM response: {said}"))
    if name == "test_elicitation":
        answer = await ask(
            ctx,
            params,
            "elicitation/create",
            {
                "message": arguments.get("message", ""),
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"},
                    },
                    "required": ["username", "email"],
                },
            },
        )
        return result(text(f"User response: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"))
    if name == "test_elicitation_sep1034_defaults":
        answer = await ask(
            ctx,
            params,
            "elicitation/create",
            {
                "message": "Please review your details (defaults filled in)",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Your name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "Your age", "default": 30},
                        "score": {"type": "number", "description": "Your score", "default": 95.5},
                        "status": {
                            "type": "string",
                            "description": "Your status",
                            "enum": ["active", "inactive", "pending"],
                            "default": "active",
                        },
                        "verified": {"type": "boolean", "description": "Verified?", "default": True},
                    },
                },
            },
        )
        return result(text(f"Elicitation completed: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"))
    if name == "test_elicitation_sep1330_enums":
        answer = await ask(
            ctx,
            params,
            "elicitation/create",
            {
                "message": "Please choose",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {
                            "type": "string",
                            "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"},
                            ],
                        },
                        "legacyEnum": {
                            "type": "string",
                            "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"],
                        },
                        "untitledMulti": {
                            "type": "array",
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        },
                        "titledMulti": {
                            "type": "array",
                            "items": {
                                "anyOf": [
                                    {"const": "value1", "title": "First Choice"},
                                    {"const": "value2", "title": "Second Choice"},
                                    {"const": "value3", "title": "Third Choice"},
                                ]
                            },
                        },
                    },
                },
            },
        )
        return result(text(f"Elicitation completed: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"))
    if name == "json_schema_2020_12_tool":
        return result(text(f"Received: {json.dumps(arguments)}"))
    modern = await modern_tool(ctx, name, params)
    if modern is not None:
        return modern
    raise MCPError(-32602, f"Unknown tool: {name}")


def form(message: str, field: str, kind: str = "string") -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {"type": "object", "properties": {field: {"type": kind}}, "required": [field]},
        },
    }


def sample(prompt: str, tokens: int = 100) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": text(prompt)}], "maxTokens": tokens},
    }


ROOTS = {"method": "roots/list", "params": {}}


def needs(questions: dict[str, Any], state: str | None = None) -> types.InputRequiredResult:
    body: dict[str, Any] = {"inputRequests": questions}
    if state is not None:
        body["requestState"] = state
    return types.InputRequiredResult.model_validate(body)


def answers(params: Any) -> dict[str, Any]:
    """The client's answers, as plain JSON; an answer that is not an object is refused."""
    found = {k: plain(v) for k, v in (params.input_responses or {}).items()}
    for key, value in found.items():
        if not isinstance(value, dict):
            raise MCPError(-32602, f"the answer to {key} is not an object", {"key": key})
    return found


def content_of(answer: dict[str, Any]) -> dict[str, Any]:
    return answer.get("content") if isinstance(answer.get("content"), dict) else {}


def client_capabilities(ctx: Any) -> dict[str, Any]:
    meta = ctx.meta or {}
    declared = meta.get(types.CLIENT_CAPABILITIES_META_KEY)
    return plain(declared) or {}


async def modern_tool(ctx: Any, name: str, params: Any) -> Any:
    """The 2026-07-28 fixtures; `None` when `name` is not one of them."""
    got = answers(params)
    state = params.request_state
    if name in ("test_input_required_result_elicitation", "test_streaming_elicitation"):
        if "user_name" not in got:
            return needs({"user_name": form("What is your name?", "name")})
        return result(text(f"Hello, {content_of(got['user_name']).get('name')}!"))
    if name == "test_input_required_result_sampling":
        if "capital_question" not in got:
            return needs({"capital_question": sample("What is the capital of France?")})
        said = got["capital_question"].get("content", {})
        return result(text(f"The model said: {said.get('text') if isinstance(said, dict) else said}"))
    if name == "test_input_required_result_list_roots":
        if "client_roots" not in got:
            return needs({"client_roots": ROOTS})
        uris = [r.get("uri") for r in got["client_roots"].get("roots", [])]
        return result(text(f"Your roots: {', '.join(str(u) for u in uris) or '(none)'}"))
    if name == "test_input_required_result_request_state":
        if "confirm" not in got or state != "awaiting-confirmation":
            return needs({"confirm": form("Please confirm", "ok", "boolean")}, "awaiting-confirmation")
        return result(text(f"state-ok: confirmed={content_of(got['confirm']).get('ok')}"))
    if name == "test_input_required_result_multiple_inputs":
        wanted = {
            "user_name": form("What is your name?", "name"),
            "greeting": sample("Generate a greeting", 50),
            "client_roots": ROOTS,
        }
        if not set(wanted) <= set(got) or state != "three-questions":
            return needs(wanted, "three-questions")
        return result(text(f"All three answered for {content_of(got['user_name']).get('name')}"))
    if name == "test_input_required_result_multi_round":
        if state == "round-2" and "step2" in got:
            return result(text(f"Done: favourite colour {content_of(got['step2']).get('color')}"))
        if state == "round-1" and "step1" in got:
            return needs({"step2": form("Step 2: What is your favorite color?", "color")}, "round-2")
        return needs({"step1": form("Step 1: What is your name?", "name")}, "round-1")
    if name == "test_input_required_result_tampered_state":
        if state is None:
            return needs({"confirm": form("Please confirm", "ok", "boolean")}, "untampered")
        return result(text("state-ok: the state came back as sealed"))
    if name == "test_input_required_result_capabilities":
        declared = client_capabilities(ctx)
        wanted = {}
        if "elicitation" in declared:
            wanted["user_name"] = form("What is your name?", "name")
        if "sampling" in declared:
            wanted["greeting"] = sample("Generate a greeting", 50)
        if "roots" in declared:
            wanted["client_roots"] = ROOTS
        if not wanted or set(wanted) <= set(got):
            return result(text(f"Asked only what was declared: {sorted(wanted)}"))
        return needs(wanted)
    if name == "test_missing_capability":
        if "sampling" not in client_capabilities(ctx):
            raise MCPError(-32021, "this tool needs the sampling capability", {"requiredCapabilities": {"sampling": {}}})
        return result(text("The client declared sampling"))
    if name == "test_logging_tool":
        await ctx.session.send_log_message("info", "a message from test_logging_tool", related_request_id=ctx.request_id)
        return result(text("Logged (if the request asked for logs)"))
    if name in ("test_trigger_tool_change", "test_trigger_prompt_change"):
        kind = "tool" if name == "test_trigger_tool_change" else "prompt"
        DYNAMIC[kind] = not DYNAMIC[kind]
        await BUS.publish(ToolsListChanged() if kind == "tool" else PromptsListChanged())
        return result(text(f"The {kind} list changed"))
    return None


def embedded(uri: str, body: str) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": body}}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    extra = [tool("test_dynamic_tool", "Appears and goes with test_trigger_tool_change")] if DYNAMIC["tool"] else []
    return types.ListToolsResult.model_validate({"tools": TOOLS + extra})


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult.model_validate({"resources": RESOURCES})


async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": TEMPLATES})


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    log(event="read", uri=uri)
    if uri == "test://static-text":
        content = {"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."}
    elif uri == "test://static-binary":
        content = {"uri": uri, "mimeType": "image/png", "blob": PNG}
    elif uri == "test://watched-resource":
        content = {"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        id_ = uri[len("test://template/") : -len("/data")]
        body = json.dumps({"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"})
        content = {"uri": uri, "mimeType": "application/json", "text": body}
    else:
        raise MCPError(-32602, "Resource not found", {"uri": uri})
    return types.ReadResourceResult.model_validate({"contents": [content]})


async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    log(event="subscribe", uri=str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    log(event="unsubscribe", uri=str(params.uri))
    return types.EmptyResult()


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    extra = [{"name": "test_dynamic_prompt", "description": "Appears and goes with test_trigger_prompt_change"}]
    return types.ListPromptsResult.model_validate({"prompts": PROMPTS + (extra if DYNAMIC["prompt"] else [])})


async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> Any:
    arguments = params.arguments or {}
    log(event="prompt", name=params.name, arguments=arguments)
    if params.name == "test_input_required_result_prompt":
        got = answers(params)
        if "user_context" not in got:
            return needs({"user_context": form("What context should the prompt use?", "context")})
        said = f"Use this context: {content_of(got['user_context']).get('context')}"
        return types.GetPromptResult.model_validate({"messages": [{"role": "user", "content": text(said)}]})
    if params.name == "test_simple_prompt":
        messages = [{"role": "user", "content": text("This is a simple prompt for testing.")}]
    elif params.name == "test_prompt_with_arguments":
        said = f"Prompt with arguments: arg1='{arguments.get('arg1')}', arg2='{arguments.get('arg2')}'"
        messages = [{"role": "user", "content": text(said)}]
    elif params.name == "test_prompt_with_embedded_resource":
        messages = [
            {"role": "user", "content": embedded(arguments.get("resourceUri", ""), "Embedded resource content for testing.")},
            {"role": "user", "content": text("Please process the embedded resource above.")},
        ]
    elif params.name == "test_prompt_with_image":
        messages = [
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "user", "content": text("Please analyze the image above.")},
        ]
    else:
        raise MCPError(-32602, f"Unknown prompt: {params.name}")
    return types.GetPromptResult.model_validate({"messages": messages})


async def complete(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
    log(event="complete", ref=params.ref.model_dump(by_alias=True), argument=params.argument.model_dump())
    return types.CompleteResult.model_validate({"completion": {"values": [], "total": 0, "hasMore": False}})


async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    log(event="setLevel", level=params.level)
    return types.EmptyResult()


def main() -> None:
    port = int(sys.argv[1])
    import warnings

    with warnings.catch_warnings():
        # Logging and subscriptions are deprecated at 2026-07-28; the 2025 scenarios need them.
        warnings.simplefilter("ignore")
        server = Server(
            NAME,
            version="1.0.0",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=read_resource,
            on_subscribe_resource=subscribe,
            on_unsubscribe_resource=unsubscribe,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
            on_completion=complete,
            on_set_logging_level=set_level,
            on_subscriptions_listen=ListenHandler(BUS),
        )
    # A request state is sealed on its way out and checked on its way back in (HMAC): a
    # tampered one is refused before any tool sees it.
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=NAME))
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
