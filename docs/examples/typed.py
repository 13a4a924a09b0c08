"""Typed tools: the output schema comes from the return type. python typed.py"""

import asyncio
import dataclasses
import json

from pydantic import BaseModel
from typing_extensions import TypedDict

from snodo import Client, Server
from snodo.client.transports import MemoryTransport

server = Server("typed", "1.0.0")


class Reading(BaseModel):
    city: str
    celsius: float


@dataclasses.dataclass
class Week:
    city: str
    highs: list[int]


class Range(TypedDict):
    low: int
    high: int


@server.tool
def now(city: str) -> Reading:
    """A model: its schema is the output schema."""
    return Reading(city=city, celsius=21.5)


@server.tool
def week(city: str) -> Week:
    """A dataclass, the same."""
    return Week(city, [20, 22, 19])


@server.tool
def spread(city: str) -> Range:
    """A TypedDict, the same."""
    return {"low": 12, "high": 22}


@server.tool
def rain_days(city: str) -> int:
    """Anything else is wrapped: {"result": 3}."""
    return 3


@server.tool
def warnings(city: str) -> list[str] | None:
    """Lists and optionals too."""
    return ["wind"] if city == "Bergen" else None


@server.tool
def summary(city: str) -> str:
    """A str is text: no output schema."""
    return f"{city}: mild"


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        for tool in await client.list_tools():
            schema = tool.model_dump(by_alias=True).get("outputSchema")
            print(tool.name, sorted(schema["properties"]) if schema else "no output schema")
        for name in ("now", "week", "spread", "rain_days", "warnings", "summary"):
            result = await client.call_tool(name, {"city": "Bergen"})
            structured = result.model_dump(by_alias=True).get("structuredContent")
            print(name, json.dumps(structured), "|", result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
