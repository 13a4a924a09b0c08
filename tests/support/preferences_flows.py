"""Every flow of examples/preferences.py driven by snodo's client over HTTP: the form
and URL questions answered, sampling and roots given, each tool, resource and prompt
read. The tests that serve the example another way (a proxy, a web framework's mount)
check the texts it returns."""

from __future__ import annotations

import asyncio
from typing import Any

from snodo.client import Client

ANSWERS = {"theme": "dark", "language": "ja", "confirm": True}


def _elicit(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("mode") == "url":
        return {"action": "accept"}
    [field] = params["requestedSchema"]["properties"]
    return {"action": "accept", "content": {field: ANSWERS[field]}}


def _sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Hallo!"}, "model": "m"}


def _roots(params: dict[str, Any]) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///home/ana/notes", "name": "notes"}]}


def every_flow(url: str, era: str) -> list[str]:
    """The texts of the saved preferences, the privacy notice, the summary resource, the
    prompt and the greeting, in that order; the client's era checked on the way."""

    async def scenario() -> list[str]:
        async with Client.http(
            url,
            era=era,
            elicitation=_elicit,
            url_elicitation=_elicit,
            sampling=_sample,
            roots=_roots,
        ) as client:
            saved = (await client.call_tool("preferences")).content[0]
            notice = (await client.call_tool("privacy_notice")).content[0]
            read = (await client.read_resource("prefs://summary")).contents[0]
            prompt = (await client.get_prompt("preferences_prompt")).messages[0].content
            greeting = (await client.call_tool("greeting")).content[0]
            assert client.era == era
            return [item.text for item in (saved, notice, read, prompt, greeting)]  # type: ignore[union-attr]

    return asyncio.run(asyncio.wait_for(scenario(), 60))
