"""The official Python SDK's legacy-only client (mcp 1.30.0) against a snodo server that
searches its tools: ``python search_tools.py URL`` initializes a 2025-11-25 session over
Streamable HTTP, lists the tools, searches with ``search_tools``, calls what it found
through ``call_tool`` and a hidden tool by its name, and prints what it saw as one JSON
object. Run with that release's interpreter (tests/support/legacy_sdk.py)."""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


def text(result) -> str:  # type: ignore[no-untyped-def]
    return "".join(block.text for block in result.content if block.type == "text")


async def main(url: str) -> None:
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        listed = await session.list_tools()
        found = await session.call_tool("search_tools", {"query": "décompresse l'archive"})
        none = await session.call_tool("search_tools", {"query": "what's my horoscope today"})
        names = [tool["name"] for tool in found.structuredContent["tools"]]
        through = await session.call_tool(
            "call_tool", {"name": names[0], "arguments": {"archive": "a.zip"}}
        )
        hidden = await session.call_tool("geocode", {"address": "1 Main St"})
        seen = {
            "protocolVersion": init.protocolVersion,
            "extensions": sorted((init.capabilities.model_extra or {}).get("extensions") or {}),
            "listed": [tool.name for tool in listed.tools],
            "found": names,
            "nothing": none.structuredContent["tools"],
            "through": text(through),
            "hidden": text(hidden),
        }
        print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
