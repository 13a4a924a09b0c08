"""FastMCP's client against a snodo server that searches its tools: ``python
search_tools.py URL`` lists the tools, searches with ``search_tools``, calls what it found
through ``call_tool`` and a hidden tool by its name, and prints what it saw as one JSON
object. Run with the FastMCP venv's interpreter (tests/support/fastmcp.py)."""

import asyncio
import json
import sys

from fastmcp import Client


def text(result) -> str:  # type: ignore[no-untyped-def]
    return "".join(block.text for block in result.content if block.type == "text")


async def main(url: str) -> None:
    async with Client(url) as client:
        listed = await client.list_tools()
        found = await client.call_tool("search_tools", {"query": "send an email to dana"})
        none = await client.call_tool("search_tools", {"query": "order a pepperoni pizza"})
        names = [tool["name"] for tool in found.structured_content["tools"]]
        through = await client.call_tool(
            "call_tool",
            {
                "name": names[0],
                "arguments": {"to": ["dana@acme.com"], "subject": "Hi", "body": "x"},
            },
        )
        hidden = await client.call_tool("geocode", {"address": "1 Main St"})
        seen = {
            "protocolVersion": client.protocol_version,
            "listed": [tool.name for tool in listed],
            "found": names,
            "schema": found.structured_content["tools"][0]["inputSchema"]["required"],
            "nothing": none.structured_content["tools"],
            "through": text(through),
            "hidden": text(hidden),
        }
        print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
