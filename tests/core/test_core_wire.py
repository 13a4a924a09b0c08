"""Literal wire round-trips through the in-process core: request JSON in, exact JSON out.

Every outgoing message is also validated against the generated models (wire.call).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.server import CacheHint, Caching, Server
from tests.support.wire import SERVER_INFO, answer, call, request


class Forecast(BaseModel):
    city: str
    celsius: float


def build() -> Server:
    server = Server(
        "test-server",
        "1.0.0",
        instructions="Use the tools.",
        caching=Caching(lists=CacheHint(300_000, "public"), read=CacheHint(60_000, "private")),
    )

    @server.tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool
    async def forecast(city: str) -> Forecast:
        """Weather for a city."""
        return Forecast(city=city, celsius=21.5)

    @server.tool(name="broken_forecast", output_schema={"type": "object", "required": ["city"]})
    def broken() -> dict[str, Any]:
        return {"town": "x"}

    @server.tool
    def explode() -> str:
        raise RuntimeError("disk on fire")

    @server.tool
    def typed_failure() -> str:
        raise InvalidParams("Unknown account 42")

    @server.tool
    def slow(ctx: Context) -> str:
        for step in (0, 50, 100):
            ctx.report_progress(step, 100)
        return "done"

    @server.tool
    def chatty(ctx: Context) -> str:
        ctx.log("debug", "noise")
        ctx.log("warning", {"disk": "low"}, logger="fs")
        return "ok"

    @server.resource("test://hello", name="hello", mime_type="text/plain")
    def hello() -> str:
        return "Hello!"

    @server.resource("test://pixel", name="pixel", mime_type="image/png")
    def pixel() -> bytes:
        return b"\x89PNG"

    @server.resource("test://broken", name="broken")
    def broken_resource() -> str:
        raise RuntimeError("secret detail")

    @server.resource_template("test://items/{item_id}", name="item", mime_type="application/json")
    def item(item_id: str) -> str:
        return f'{{"id": "{item_id}"}}'

    @server.prompt(description="Greets someone.")
    def greet(name: str, mood: str = "warm") -> str:
        return f"Greet {name} in a {mood} way."

    @server.completion("ref/prompt", "greet")
    def names(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [n for n in ("alice", "albert", "bob") if n.startswith(value)]

    return server


SERVER = build()


def test_discover() -> None:
    assert answer(SERVER, request("server/discover", id="d1")) == {
        "jsonrpc": "2.0",
        "id": "d1",
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {
                "logging": {},
                "tools": {"listChanged": True},
                "resources": {"listChanged": True, "subscribe": True},
                "prompts": {"listChanged": True},
                "completions": {},
            },
            "instructions": "Use the tools.",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": SERVER_INFO,
        },
    }


def test_tools_list_is_deterministic_and_cacheable() -> None:
    first = answer(SERVER, request("tools/list"))
    assert first == answer(SERVER, request("tools/list"))
    result = first["result"]
    assert [t["name"] for t in result["tools"]][:3] == ["add", "forecast", "broken_forecast"]
    assert result["tools"][0] == {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "additionalProperties": False,
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "type": "object",
        },
    }
    assert result["tools"][1]["outputSchema"] == {
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        "required": ["city", "celsius"],
        "type": "object",
    }
    assert (result["ttlMs"], result["cacheScope"]) == (300_000, "public")


def test_tools_call_text() -> None:
    assert answer(
        SERVER, request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, id=7)
    ) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "5"}],
            "_meta": SERVER_INFO,
        },
    }


def test_tools_call_structured_output() -> None:
    result = answer(
        SERVER, request("tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}})
    )["result"]
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": '{"city": "Oslo", "celsius": 21.5}'}],
        "structuredContent": {"city": "Oslo", "celsius": 21.5},
        "_meta": SERVER_INFO,
    }


def test_structured_output_outside_the_schema_is_a_server_error() -> None:
    response = answer(SERVER, request("tools/call", {"name": "broken_forecast"}, id=3))
    assert response == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32603, "message": "Tool result does not match its output schema"},
    }


def test_invalid_arguments_are_a_tool_error_result() -> None:
    result = answer(SERVER, request("tools/call", {"name": "add", "arguments": {"a": "2"}}))[
        "result"
    ]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Invalid arguments for tool add:")


def test_untyped_exception_in_a_tool_is_an_error_result_without_traceback() -> None:
    result = answer(SERVER, request("tools/call", {"name": "explode"}))["result"]
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "disk on fire"}],
        "isError": True,
        "_meta": SERVER_INFO,
    }


def test_typed_error_in_a_tool_keeps_its_json_rpc_meaning() -> None:
    assert answer(SERVER, request("tools/call", {"name": "typed_failure"}, id=4)) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32602, "message": "Unknown account 42"},
    }


def test_unknown_tool() -> None:
    assert answer(SERVER, request("tools/call", {"name": "nope"}, id=5))["error"] == {
        "code": -32602,
        "message": "Unknown tool: nope",
    }


def test_progress_is_emitted_for_a_progress_token() -> None:
    reply = call(SERVER, request("tools/call", {"name": "slow"}, progressToken="p-1"))
    assert reply.notifications == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p-1", "progress": step, "total": 100},
        }
        for step in (0, 50, 100)
    ]
    assert call(SERVER, request("tools/call", {"name": "slow"})).notifications == []


def test_progress_streams_through_emit_as_it_happens() -> None:
    seen: list[dict[str, Any]] = []
    reply = call(SERVER, request("tools/call", {"name": "slow"}, progressToken=9), emit=seen.append)
    assert [n["params"]["progress"] for n in seen] == [0, 50, 100]
    assert reply.notifications == []


def test_logging_only_when_the_request_asks_and_at_its_level() -> None:
    assert call(SERVER, request("tools/call", {"name": "chatty"})).notifications == []
    reply = call(
        SERVER,
        request("tools/call", {"name": "chatty"}, **{"io.modelcontextprotocol/logLevel": "info"}),
    )
    assert reply.notifications == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "warning", "data": {"disk": "low"}, "logger": "fs"},
        }
    ]
    bad = answer(SERVER, request("tools/list", **{"io.modelcontextprotocol/logLevel": "loud"}))
    assert bad["error"]["code"] == -32602
    assert "logLevel" in bad["error"]["message"] and "loud" not in bad["error"]["message"]


def test_resources() -> None:
    listed = answer(SERVER, request("resources/list"))["result"]
    assert listed["resources"][0] == {
        "uri": "test://hello",
        "name": "hello",
        "mimeType": "text/plain",
    }
    assert answer(SERVER, request("resources/templates/list"))["result"]["resourceTemplates"] == [
        {"uriTemplate": "test://items/{item_id}", "name": "item", "mimeType": "application/json"}
    ]
    assert answer(SERVER, request("resources/read", {"uri": "test://hello"}))["result"] == {
        "resultType": "complete",
        "contents": [{"uri": "test://hello", "mimeType": "text/plain", "text": "Hello!"}],
        "ttlMs": 60_000,
        "cacheScope": "private",
        "_meta": SERVER_INFO,
    }
    assert answer(SERVER, request("resources/read", {"uri": "test://pixel"}))["result"][
        "contents"
    ] == [{"uri": "test://pixel", "mimeType": "image/png", "blob": "iVBORw=="}]
    assert answer(SERVER, request("resources/read", {"uri": "test://items/a%20b"}))["result"][
        "contents"
    ] == [{"uri": "test://items/a%20b", "mimeType": "application/json", "text": '{"id": "a b"}'}]


def test_unknown_resource_is_invalid_params_with_the_uri() -> None:
    assert answer(SERVER, request("resources/read", {"uri": "test://missing"}, id=8)) == {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {
            "code": -32602,
            "message": "Resource not found",
            "data": {"uri": "test://missing"},
        },
    }


def test_untyped_exception_in_a_resource_is_a_generic_internal_error() -> None:
    response = answer(SERVER, request("resources/read", {"uri": "test://broken"}))
    assert response["error"] == {"code": -32603, "message": "Internal error"}


def test_prompts() -> None:
    assert answer(SERVER, request("prompts/list"))["result"]["prompts"] == [
        {
            "name": "greet",
            "description": "Greets someone.",
            "arguments": [{"name": "name", "required": True}, {"name": "mood", "required": False}],
        }
    ]
    result = answer(SERVER, request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}))
    assert result["result"] == {
        "resultType": "complete",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Greet Ada in a warm way."}}
        ],
        "_meta": SERVER_INFO,
    }
    missing = answer(SERVER, request("prompts/get", {"name": "greet"}))
    assert missing["error"] == {
        "code": -32602,
        "message": "Missing required argument(s) for prompt greet: ['name']",
    }
    unknown = answer(SERVER, request("prompts/get", {"name": "nope"}))
    assert unknown["error"] == {"code": -32602, "message": "Unknown prompt: nope"}


def test_completion() -> None:
    result = answer(
        SERVER,
        request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "al"},
            },
        ),
    )["result"]
    assert result["completion"] == {"values": ["alice", "albert"], "total": 2, "hasMore": False}


def test_features_the_server_does_not_offer_are_not_found() -> None:
    bare = Server("bare", "0")
    assert answer(bare, request("tools/list"))["error"]["code"] == -32601
    assert answer(bare, request("prompts/get", {"name": "x"}))["error"]["code"] == -32601
    assert answer(bare, request("server/discover"))["result"]["capabilities"] == {"logging": {}}


def test_pagination_follows_cursors_and_rejects_forged_ones() -> None:
    server = build()
    server.page_size = 2
    names: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {} if cursor is None else {"cursor": cursor}
        result = answer(server, request("tools/list", params))["result"]
        names += [t["name"] for t in result["tools"]]
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == list(server.registry.tools) and pages == 4
    for forged in ("", "garbage!", "cHJvbXB0cy9saXN0OjI"):  # the last: a prompts/list cursor
        error = answer(server, request("tools/list", {"cursor": forged}))["error"]
        assert error == {"code": -32602, "message": "Invalid cursor"}


def test_sync_and_async_handlers_run_concurrently() -> None:
    server = Server("s", "1")
    order: list[str] = []

    @server.tool
    async def wait(ctx: Context) -> str:
        order.append("start")
        await asyncio.sleep(0.01)
        order.append("end")
        return "ok"

    async def both() -> list[Any]:
        return list(
            await asyncio.gather(
                *(server.handle(request("tools/call", {"name": "wait"}, id=i)) for i in range(2))
            )
        )

    replies = asyncio.run(both())
    assert order == ["start", "start", "end", "end"]
    assert [r.response["id"] for r in replies] == [0, 1]


@pytest.mark.parametrize(
    ("prop", "message"),
    [
        (
            {"type": "number", "x-mcp-header": "Ratio"},
            "tool bad_header: x-mcp-header 'Ratio' must be on a string, integer or boolean",
        ),
        (
            {"type": "string", "x-mcp-header": "Two Words"},
            "tool bad_header: x-mcp-header 'Two Words' at ratio is not a header token",
        ),
        (
            {"type": "string", "x-mcp-header": ""},
            "tool bad_header: x-mcp-header '' at ratio is not a header token",
        ),
    ],
    ids=["number", "space", "empty"],
)
def test_registering_a_tool_with_an_invalid_x_mcp_header_is_refused(
    prop: dict[str, Any], message: str
) -> None:
    """server/tools.mdx limits x-mcp-header to token names on string, integer or boolean
    properties; a tool that breaks the rule is never served."""
    server = Server("s", "1")

    @server.tool
    def echo(text: str) -> str:
        return text

    def bad_header(**arguments: Any) -> str:
        return "called"

    schema = {"type": "object", "properties": {"ratio": prop}}
    with pytest.raises(ValueError) as refused:
        server.tool(input_schema=schema)(bad_header)
    assert str(refused.value) == message
    listed = answer(server, request("tools/list"))["result"]
    assert [tool["name"] for tool in listed["tools"]] == ["echo"]


def test_registering_a_tool_with_a_header_name_twice_is_refused() -> None:
    server = Server("s", "1")
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "region"},
        },
    }
    with pytest.raises(ValueError) as refused:
        server.tool(input_schema=schema, name="twice")(lambda **arguments: "called")
    assert str(refused.value) == "tool twice: x-mcp-header 'region' is declared twice"
