"""What a tool may return besides text and models, and the schemas of its types, on the
wire: dataclasses and lists of models as JSON, titles only where the author wrote one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, Field

from snodo.server import Server
from tests.support.wire import answer, request


@dataclass
class Point:
    x: int
    y: int


class Item(BaseModel):
    item_name: str
    count: int = Field(default=1, title="How many")


class Basket(BaseModel):
    owner: str
    items: list[Item]


def serve() -> Server:
    server = Server("values", "1.0.0")

    @server.tool
    def point() -> Point:
        return Point(1, 2)

    @server.tool
    def items() -> list[Item]:
        return [Item(item_name="a"), Item(item_name="b", count=2)]

    @server.tool
    def basket(owner: str, first: Item, size: Annotated[int, Field(title="Size")] = 1) -> Basket:
        return Basket(owner=owner, items=[first] * size)

    return server


def call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    message = request("tools/call", {"name": name, "arguments": arguments or {}})
    result: dict[str, Any] = answer(serve(), message)["result"]
    return result


def test_a_dataclass_and_a_list_of_models_come_back_as_json_text() -> None:
    assert call("point")["content"] == [{"type": "text", "text": '{"x": 1, "y": 2}'}]
    assert call("items")["content"] == [
        {
            "type": "text",
            "text": '[{"item_name": "a", "count": 1}, {"item_name": "b", "count": 2}]',
        }
    ]


def test_schemas_carry_the_authors_titles_and_no_generated_ones_at_any_level() -> None:
    tools = answer(serve(), request("tools/list"))["result"]["tools"]
    basket = next(tool for tool in tools if tool["name"] == "basket")
    item = {
        "properties": {
            "item_name": {"type": "string"},
            "count": {"default": 1, "title": "How many", "type": "integer"},
        },
        "required": ["item_name"],
        "type": "object",
    }
    assert basket["inputSchema"] == {
        "$defs": {"Item": item},
        "additionalProperties": False,
        "properties": {
            "owner": {"type": "string"},
            "first": {"$ref": "#/$defs/Item"},
            "size": {"default": 1, "title": "Size", "type": "integer"},
        },
        "required": ["owner", "first"],
        "type": "object",
    }
    assert basket["outputSchema"] == {
        "$defs": {"Item": item},
        "properties": {
            "owner": {"type": "string"},
            "items": {"items": {"$ref": "#/$defs/Item"}, "type": "array"},
        },
        "required": ["owner", "items"],
        "type": "object",
    }
    done = call("basket", {"owner": "ada", "first": {"item_name": "pear"}, "size": 2})
    assert done["structuredContent"] == {
        "owner": "ada",
        "items": [{"item_name": "pear", "count": 1}, {"item_name": "pear", "count": 1}],
    }
