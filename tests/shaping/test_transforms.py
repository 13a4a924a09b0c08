"""Tools made from what a server has: a tool under a new shape (literal wire JSON: its
listing, its checks, the original's code and output), a resource and a prompt as tools,
and the same through a legacy session and a proxy."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.gateway import mount
from snodo.server import Server
from snodo.server.tools import ToolDefinitionError
from tests.middleware.support import LegacyPeer, ask, call, synchronous
from tests.support.wire import request


class Forecast(BaseModel):
    city: str
    days: int
    units: str


def weather() -> tuple[Server, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    server = Server("weather", "1.0.0")

    @server.tool(inline=True)
    def forecast(
        city: Annotated[str, Field(description="Where")],
        days: int = 1,
        units: str = "metric",
        api_key: str = "",
    ) -> Forecast:
        """The forecast for a city."""
        seen.append({"city": city, "days": days, "units": units, "api_key": api_key})
        return Forecast(city=city, days=days, units=units)

    @server.resource("notes://today", inline=True, description="Today's note")
    def today() -> str:
        return "sunny"

    @server.resource_template("notes://{day}/{kind}", inline=True)
    def note(day: str, kind: str) -> str:
        """A day's note of a kind."""
        return f"{kind} note of {day}"

    @server.prompt(inline=True)
    def plan(city: str, style: str = "brief") -> str:
        """Plan a trip."""
        return f"Plan a {style} trip to {city}"

    return server, seen


@synchronous
async def test_a_tool_under_a_new_shape_is_listed_and_called_as_the_original() -> None:
    server, seen = weather()
    made = server.transform(
        "forecast",
        name="weekly",
        description="A week of weather, in degrees Celsius.",
        hide={"days": 7, "api_key": lambda ctx: f"key-of-{ctx.principal}"},
        rename={"city": "place"},
    )
    listed = (await ask(server, "tools/list"))["result"]["tools"]
    assert [tool["name"] for tool in listed] == ["weekly"]
    assert listed[0] == made.definition
    assert listed[0]["description"] == "A week of weather, in degrees Celsius."
    assert listed[0]["inputSchema"] == {
        "type": "object",
        "properties": {
            "place": {"description": "Where", "type": "string"},
            "units": {"default": "metric", "type": "string"},
        },
        "required": ["place"],
        "additionalProperties": False,
    }
    assert listed[0]["outputSchema"]["properties"]["units"] == {"type": "string"}
    reply = await server.handle(
        request("tools/call", {"name": "weekly", "arguments": {"place": "Oslo"}}), principal="ada"
    )
    assert reply.response is not None
    assert reply.response["result"]["structuredContent"] == {
        "city": "Oslo",
        "days": 7,
        "units": "metric",
    }
    assert seen == [{"city": "Oslo", "days": 7, "units": "metric", "api_key": "key-of-ada"}]
    gone = await call(server, "forecast", city="Oslo")
    assert gone["error"] == {"code": -32602, "message": "Unknown tool: forecast"}


@synchronous
async def test_a_hidden_argument_cannot_be_passed_and_checks_stay_the_originals() -> None:
    server, seen = weather()
    server.transform("forecast", name="weekly", hide={"days": 7}, keep=True)
    sneaked = (await call(server, "weekly", city="Oslo", days=1))["result"]
    assert sneaked["isError"] is True
    assert "Invalid arguments for tool weekly" in sneaked["content"][0]["text"]
    wrong = (await call(server, "weekly", city=3))["result"]
    assert wrong["isError"] is True
    assert (await call(server, "forecast", city="Rome"))["result"]["structuredContent"]["days"] == 1
    assert [entry["city"] for entry in seen] == ["Rome"]


@synchronous
async def test_an_async_computed_value_and_a_question_of_the_original() -> None:
    server = Server("asking", "1.0.0")
    elicit = {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        },
    }

    @server.tool
    async def delete(ctx: Context, item: str, owner: str) -> Any:
        if not ctx.input_responses:
            return input_required({"sure": elicit})
        return f"deleted {item} of {owner}"

    async def owner(ctx: Context) -> str:
        return ctx.principal or "nobody"

    server.transform("delete", name="delete_mine", hide={"owner": owner})
    first = await server.handle(
        request(
            "tools/call",
            {"name": "delete_mine", "arguments": {"item": "x"}},
            capabilities={"elicitation": {}},
        ),
        principal="bo",
    )
    assert first.response is not None
    result = first.response["result"]
    assert result["resultType"] == "input_required"
    retry = request(
        "tools/call",
        {
            "name": "delete_mine",
            "arguments": {"item": "x"},
            "inputResponses": {"sure": {"action": "accept", "content": {"ok": True}}},
            "requestState": result["requestState"],
        },
        capabilities={"elicitation": {}},
    )
    second = await server.handle(retry, principal="bo")
    assert second.response is not None
    assert second.response["result"]["content"] == [{"type": "text", "text": "deleted x of bo"}]


def test_a_shape_that_does_not_fit_is_refused_where_written() -> None:
    server, _ = weather()
    with pytest.raises(ToolDefinitionError, match="no argument 'town'"):
        server.transform("forecast", hide={"town": 1})
    with pytest.raises(ToolDefinitionError, match="one name"):
        server.transform("forecast", rename={"city": "units"})
    with pytest.raises(KeyError, match="no tool named"):
        server.transform("nothing")


@synchronous
async def test_a_resource_and_a_template_as_tools() -> None:
    server, _ = weather()
    server.resource_as_tool("notes://today")
    server.resource_as_tool("notes://{day}/{kind}", name="read_note")
    server.resource_as_tool()
    tools = {t["name"]: t for t in (await ask(server, "tools/list"))["result"]["tools"]}
    assert tools["read_today"] == {
        "name": "read_today",
        "description": "Today's note",
        "inputSchema": {"type": "object", "properties": {}, "required": []},
        "annotations": {"readOnlyHint": True},
    }
    assert tools["read_note"]["inputSchema"]["required"] == ["day", "kind"]
    assert (await call(server, "read_today"))["result"]["content"] == [
        {"type": "text", "text": "sunny"}
    ]
    note = await call(server, "read_note", day="mon day", kind="work")
    assert note["result"]["content"] == [{"type": "text", "text": "work note of mon day"}]
    listing = (await call(server, "read_resource"))["result"]["content"][0]["text"]
    assert listing == "notes://today: Today's note\nnotes://{day}/{kind}: A day's note of a kind."
    missing = (await call(server, "read_resource", uri="notes://none"))["result"]
    assert missing == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Resource not found"}],
        "isError": True,
        "_meta": missing["_meta"],
    }


@synchronous
async def test_a_prompt_as_a_tool_and_any_prompt() -> None:
    server, _ = weather()
    server.prompt_as_tool("plan")
    server.prompt_as_tool()
    tools = {t["name"]: t for t in (await ask(server, "tools/list"))["result"]["tools"]}
    assert tools["prompt_plan"]["inputSchema"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}, "style": {"type": "string"}},
        "required": ["city"],
    }
    planned = await call(server, "prompt_plan", city="Lima")
    assert planned["result"]["content"] == [
        {"type": "text", "text": "user: Plan a brief trip to Lima"}
    ]
    listed = (await call(server, "get_prompt"))["result"]["content"][0]["text"]
    assert (
        listed
        == '[{"name": "plan", "description": "Plan a trip.", "arguments": ["city", "style"]}]'
    )
    arguments = {"name": "plan", "arguments": {"city": "Pisa", "style": "long"}}
    got = await ask(server, "tools/call", {"name": "get_prompt", "arguments": arguments})
    assert got["result"]["content"][0]["text"] == "user: Plan a long trip to Pisa"


@synchronous
async def test_through_a_legacy_session() -> None:
    server, seen = weather()
    server.transform("forecast", name="weekly", hide={"days": 7})
    peer = LegacyPeer(server)
    await peer.initialize()
    answered = await peer.call("weekly", city="Kyiv")
    assert answered["result"]["structuredContent"] == {"city": "Kyiv", "days": 7, "units": "metric"}
    assert seen[-1]["days"] == 7


@synchronous
async def test_a_mounted_servers_resources_and_prompts_as_tools() -> None:
    backend, _ = weather()
    front = Server("front", "1.0.0")
    mount(front, backend, prefix="w")
    front.resource_as_tool("notes://today", name="today")
    front.prompt_as_tool("w_plan")
    await front.startup()
    try:
        read = await call(front, "today")
        planned = await call(front, "prompt_w_plan", city="Quito")
    finally:
        await front.shutdown()
    assert read["result"]["content"] == [{"type": "text", "text": "sunny"}]
    assert planned["result"]["content"] == [
        {"type": "text", "text": "user: Plan a brief trip to Quito"}
    ]
