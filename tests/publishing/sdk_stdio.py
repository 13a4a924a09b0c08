"""Starts a server as a host would, with the official Python SDK's client (mcp 1.30.0),
lists its tools and calls one. Run with that release's interpreter
(tests/support/legacy_sdk.py), never imported by pytest:

    .venv-mcp1/bin/python tests/publishing/sdk_stdio.py SPEC.json

SPEC holds ``command``, ``args``, ``env``, ``cwd`` and the ``call`` (tool name and
arguments); it prints one JSON object: the tools listed and the call's text.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(spec: dict[str, Any]) -> None:
    parameters = StdioServerParameters(
        command=spec["command"], args=spec["args"], env=spec["env"], cwd=spec["cwd"]
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        name, arguments = spec["call"]
        result = await session.call_tool(name, arguments)
    texts = [block.text for block in result.content if block.type == "text"]
    print(json.dumps({"tools": [tool.name for tool in tools.tools], "call": texts}))


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as file:
        asyncio.run(asyncio.wait_for(main(json.load(file)), 60))
