"""What a FastMCP 4.2.3 server does with tags and enable/disable, seen by its own client
in memory: the tools listed after ``disable(tags={"internal"})``, the answer to a call of
the hidden tool and of a tool that does not exist, and whether a runtime ``enable``
reached the client as ``notifications/tools/list_changed``. Prints one JSON object."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp.types
from fastmcp import Client, FastMCP


def build() -> FastMCP:
    server = FastMCP("tagged")

    @server.tool(tags={"public"})
    def weather(city: str) -> str:
        return f"sunny in {city}"

    @server.tool(tags={"admin"})
    def restart(service: str) -> str:
        return f"restarted {service}"

    @server.tool(tags={"internal"})
    def debug_dump() -> str:
        return "everything"

    return server


async def answer_of(client: Client, name: str) -> str:
    try:
        result = await client.call_tool_mcp(name, {})
    except Exception as exc:  # an error response: its message
        return str(exc)
    return " ".join(getattr(block, "text", "") for block in result.content)


async def main() -> None:
    server = build()
    server.disable(tags={"internal"})
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(root, mcp.types.ToolListChangedNotification):
            heard.append(root.method)

    async with Client(server, message_handler=on_message) as client:
        listed = sorted(tool.name for tool in await client.list_tools())
        hidden = await answer_of(client, "debug_dump")
        missing = await answer_of(client, "no_such_tool")
        server.enable(tags={"internal"})
        await asyncio.sleep(0.5)
        after = sorted(tool.name for tool in await client.list_tools())
    print(
        json.dumps(
            {
                "listed": listed,
                "hidden": hidden,
                "missing": missing,
                "after_enable": after,
                "list_changed": bool(heard),
            }
        )
    )


asyncio.run(main())
