"""Output schemas from return annotations, on the wire: objects as they are, other types
wrapped as {"result": ...}, text, nothing and content with no schema, and the value the
call returns as structuredContent beside a text block of the same JSON."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from snodo import Server, input_required
from snodo.core.result import InputRequired
from snodo_wire.models import ImageContent
from tests.support.wire import answer, request


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Forecast:
    city: str
    days: list[int]


class Place(BaseModel):
    name: str


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


def wrapped(schema: dict[str, Any], **defs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        "x-snodo-wrapped": True,
    }
    if defs:
        out["$defs"] = defs
    return out


def build() -> Server:
    server = Server("outputs", "1")

    @server.tool
    def count() -> int:
        return 3

    @server.tool
    def names() -> list[str]:
        return ["a", "b"]

    @server.tool
    def point() -> Point:
        return {"x": 1, "y": 2}

    @server.tool
    def forecast() -> Forecast:
        return Forecast("Oslo", [1, 2])

    @server.tool
    def maybe(give: bool = True) -> int | None:
        return 7 if give else None

    @server.tool
    def place() -> Place:
        return Place(name="Oslo")

    @server.tool
    def places() -> list[Place]:
        return [Place(name="Oslo"), Place(name="Bergen")]

    @server.tool
    def colour() -> Colour:
        return Colour.RED

    @server.tool
    def size() -> Literal["s", "m"]:
        return "m"

    @server.tool
    def scores() -> dict[str, float]:
        return {"a": 0.5}

    @server.tool
    def text() -> str:
        return "plain"

    @server.tool
    def nothing() -> None:
        return None

    @server.tool
    def picture() -> ImageContent:
        return ImageContent(type="image", data="iVBORw0KGgo=", mimeType="image/png")

    @server.tool
    def asks() -> InputRequired | int:
        return 5

    @server.tool
    def block() -> dict[str, str]:
        return {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}

    @server.tool(structured_output=False)
    def unstructured() -> int:
        return 4

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    def given() -> dict[str, int]:
        return {"n": 1}

    @server.tool
    def liar() -> int:
        return "not a number"  # type: ignore[return-value]

    return server


SERVER = build()
LISTED = {t["name"]: t for t in answer(SERVER, request("tools/list", {}, id=1))["result"]["tools"]}


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    body = request("tools/call", {"name": name, "arguments": arguments or {}}, id=2)
    return answer(SERVER, body)


def test_the_output_schema_of_each_return_type() -> None:
    schemas = {name: tool.get("outputSchema") for name, tool in LISTED.items()}
    assert schemas["count"] == wrapped({"type": "integer"})
    assert schemas["names"] == wrapped({"type": "array", "items": {"type": "string"}})
    assert schemas["point"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert schemas["forecast"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["city", "days"],
    }
    assert schemas["maybe"] == wrapped({"anyOf": [{"type": "integer"}, {"type": "null"}]})
    assert schemas["place"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    assert schemas["places"] == wrapped(
        {"type": "array", "items": {"$ref": "#/$defs/Place"}},
        Place={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
    assert schemas["colour"] == wrapped(
        {"enum": ["red", "blue"], "title": "Colour", "type": "string"}
    )
    assert schemas["size"] == wrapped({"enum": ["s", "m"], "type": "string"})
    assert schemas["scores"] == wrapped(
        {"type": "object", "additionalProperties": {"type": "number"}}
    )
    assert schemas["asks"] == wrapped({"type": "integer"})
    assert schemas["given"] == {"type": "object", "properties": {"n": {"type": "integer"}}}
    for none in ("text", "nothing", "picture", "unstructured", "block"):
        assert schemas[none] is None, none


def test_structured_content_is_the_value_beside_a_text_block_of_it() -> None:
    expected = {
        "count": ({"result": 3}, "3"),
        "names": ({"result": ["a", "b"]}, '["a", "b"]'),
        "point": ({"x": 1, "y": 2}, '{"x": 1, "y": 2}'),
        "forecast": ({"city": "Oslo", "days": [1, 2]}, '{"city": "Oslo", "days": [1, 2]}'),
        "maybe": ({"result": 7}, "7"),
        "place": ({"name": "Oslo"}, '{"name": "Oslo"}'),
        "places": ({"result": [{"name": "Oslo"}, {"name": "Bergen"}]}, None),
        "colour": ({"result": "red"}, '"red"'),
        "scores": ({"result": {"a": 0.5}}, '{"a": 0.5}'),
        "asks": ({"result": 5}, "5"),
    }
    for name, (structured, text) in expected.items():
        result = call(name)["result"]
        assert result["structuredContent"] == structured, name
        if text is not None:
            assert result["content"] == [{"type": "text", "text": text}], name
    assert call("maybe", {"give": False})["result"]["structuredContent"] == {"result": None}


def test_text_nothing_and_content_stay_content() -> None:
    assert call("text")["result"]["content"] == [{"type": "text", "text": "plain"}]
    assert "structuredContent" not in call("text")["result"]
    assert call("nothing")["result"]["content"] == []
    assert call("picture")["result"]["content"] == [
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    ]
    assert "structuredContent" not in call("unstructured")["result"]
    # A content block returned as a plain dict, annotated so, is content.
    assert call("block")["result"] == {
        "resultType": "complete",
        "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "outputs", "version": "1"}},
    }


def test_a_value_outside_its_own_schema_is_the_servers_fault() -> None:
    assert call("liar")["error"] == {
        "code": -32603,
        "message": "Tool result does not match its output schema",
    }


def test_input_required_still_asks() -> None:
    server = Server("asking", "1")
    form = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "n?",
            "requestedSchema": {"type": "object", "properties": {}},
        },
    }

    @server.tool
    def ask() -> InputRequired | int:
        return input_required({"n": form})

    body = request("tools/call", {"name": "ask", "arguments": {}}, id=1)
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {}}
    assert answer(server, body)["result"]["resultType"] == "input_required"


class Opaque:
    pass


def test_a_return_type_with_no_json_schema_is_refused_with_the_way_out() -> None:
    server = Server("refused", "1")
    with pytest.raises(
        ValueError, match="tool opaque: no JSON Schema for the return type"
    ) as raised:

        @server.tool
        def opaque() -> Opaque:
            return Opaque()

    assert "pass output_schema= or structured_output=False" in str(raised.value)

    @server.tool(structured_output=False)
    def fine() -> Opaque:
        return Opaque()


def test_a_legacy_session_gets_the_same_schema_and_an_object_it_accepts() -> None:
    import asyncio

    from snodo.legacy.methods import LegacyKernel
    from snodo.legacy.session import LegacySession
    from snodo.server.legacy_limits import LegacyLimits
    from tests.legacy.oracle import check_response

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        kernel = LegacyKernel(SERVER)
        session = LegacySession(LegacyLimits())
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        replies = []
        for message in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "names", "arguments": {}},
            },
        ):
            reply = await kernel.handle(session, message, transport="test", emit=lambda m: None)
            replies.append(reply.response)
        listed, called = replies[2], replies[3]
        assert listed is not None and called is not None
        return listed, called

    listed, called = asyncio.run(scenario())
    check_response("tools/list", listed)  # the legacy revision's own models accept them
    check_response("tools/call", called)
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert tools["names"]["outputSchema"] == LISTED["names"]["outputSchema"]
    assert called["result"]["structuredContent"] == {"result": ["a", "b"]}
