"""Drives examples/preferences.py with the official SDK's legacy-only release (mcp 1.30.0).

Run with that release's interpreter (tests/support/legacy_sdk.py), never imported by pytest:

    .venv-mcp1/bin/python tests/legacy/sdk_client.py stdio PYTHON TARGET
    .venv-mcp1/bin/python tests/legacy/sdk_client.py http URL

It initializes (the client's own negotiation), calls the preferences tool, the
URL-consent tool, reads the resource and gets the prompt, answering every elicitation
from a script, then the greeting tool, whose three declarative asks arrive as an
elicitation, a sampling request and a roots request of the server's; it prints one JSON
object: what each flow returned and what was asked.
"""

from __future__ import annotations

import asyncio
import json
import os
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
    result = await session.call_tool("greeting", {})
    report["greeting"] = [block.text for block in result.content if block.type == "text"]
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


def sampler(asked: list[str]) -> Any:
    async def sample(context: Any, params: Any) -> types.CreateMessageResult:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hallo!"), model="m"
        )

    return sample


def roots_of(asked: list[str]) -> Any:
    async def roots(context: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///home/ana/notes", name="notes")])  # type: ignore[arg-type]

    return roots


def session_of(read: Any, write: Any, asked: list[str]) -> ClientSession:
    return ClientSession(
        read,
        write,
        elicitation_callback=callback(asked),
        sampling_callback=sampler(asked),
        list_roots_callback=roots_of(asked),
    )


async def main(argv: list[str]) -> None:
    asked: list[str] = []
    if argv[0] == "stdio":
        # The server sees this process's environment (the SDK passes a bare one by
        # default), so it imports the snodo and wire packages the test runs.
        parameters = StdioServerParameters(
            command=argv[1],
            args=["-m", "snodo", "run", argv[2], "--transport", "stdio"],
            env=dict(os.environ),
        )
        async with (
            stdio_client(parameters) as (read, write),
            session_of(read, write, asked) as session,
        ):
            report = await run(session, asked)
    else:
        async with (
            streamablehttp_client(argv[1]) as (read, write, session_id),
            session_of(read, write, asked) as session,
        ):
            report = await run(session, asked)
            report["session"] = bool(session_id())
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1:]), 60))
