"""Drives examples/preferences.py with the official SDK's legacy-only release (mcp 1.30.0).

Run with that release's interpreter (tests/support/legacy_sdk.py), never imported by pytest:

    .venv-mcp1/bin/python tests/legacy/sdk_client.py stdio PYTHON TARGET
    .venv-mcp1/bin/python tests/legacy/sdk_client.py http URL

It initializes (the client's own negotiation), calls the preferences tool, the
URL-consent tool, reads the resource and gets the prompt, answering every elicitation
from a script, and prints one JSON object: what each flow returned and what was asked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

ANSWERS = {"theme": "dark", "language": "ja", "confirm": True}


async def run(session: ClientSession, asked: list[str]) -> dict[str, Any]:
    init = await session.initialize()
    report: dict[str, Any] = {"protocolVersion": init.protocolVersion}
    tools = await session.list_tools()
    report["tools"] = [tool.name for tool in tools.tools]
    result = await session.call_tool("preferences", {})
    report["tool"] = [block.text for block in result.content if block.type == "text"]
    result = await session.call_tool("privacy_notice", {})
    report["url_tool"] = [block.text for block in result.content if block.type == "text"]
    read = await session.read_resource("prefs://summary")  # type: ignore[arg-type]
    report["resource"] = [getattr(item, "text", None) for item in read.contents]
    prompt = await session.get_prompt("preferences_prompt", {})
    report["prompt"] = [getattr(m.content, "text", None) for m in prompt.messages]
    await session.send_ping()
    report["asked"] = asked
    return report


def callback(asked: list[str]) -> Any:
    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            asked.append(f"url:{params.url}:{bool(params.elicitationId)}")
            return types.ElicitResult(action="accept")
        field = next(iter(params.requestedSchema["properties"]))
        asked.append(field)
        return types.ElicitResult(action="accept", content={field: ANSWERS[field]})

    return elicit


async def main(argv: list[str]) -> None:
    asked: list[str] = []
    if argv[0] == "stdio":
        parameters = StdioServerParameters(
            command=argv[1], args=["-m", "snodo", "run", argv[2], "--transport", "stdio"]
        )
        async with (
            stdio_client(parameters) as (read, write),
            ClientSession(read, write, elicitation_callback=callback(asked)) as session,
        ):
            report = await run(session, asked)
    else:
        async with (
            streamablehttp_client(argv[1]) as (read, write, session_id),
            ClientSession(read, write, elicitation_callback=callback(asked)) as session,
        ):
            report = await run(session, asked)
            report["session"] = bool(session_id())
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1:]), 60))
