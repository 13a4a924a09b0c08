"""A tool with three declarative asks (examples/preferences.py ``greeting``: a form, a
sample, the roots) through clients we did not write and our own.

With the official Python SDK's client (mcp 2.3.0, modern era) over HTTP and stdio, all
three questions arrive in one input round and the tool completes on the retry. The
legacy SDK (mcp 1.30) and the TypeScript client take the same tool through the bridge
(tests/legacy/test_legacy_sdk.py, scripts/interop); snodo's own client in both eras is
here too."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest

from tests.support.processes import serving, snodo_run

mcp_client = pytest.importorskip("mcp.client")
types = pytest.importorskip("mcp_types")

TARGET = "examples/preferences.py:server"
EXPECTED = "Hallo! [de; notes]"


def _callbacks(asked: list[str]) -> dict[str, Any]:
    async def elicit(context: Any, params: Any) -> Any:
        asked.append("form")
        return types.ElicitResult(action="accept", content={"language": "de"})

    async def sample(context: Any, params: Any) -> Any:
        asked.append("sampling")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hallo!"), model="m"
        )

    async def roots(context: Any) -> Any:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///home/ana/notes", name="notes")])

    return {
        "elicitation_callback": elicit,
        "sampling_callback": sample,
        "list_roots_callback": roots,
    }


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_the_official_python_client_answers_all_three_in_one_round(transport: str) -> None:
    asked: list[str] = []

    async def scenario(server: Any) -> str:
        # One input round at most: a server asking one question per round would fail.
        async with mcp_client.Client(
            server, mode="2026-07-28", input_required_max_rounds=1, **_callbacks(asked)
        ) as client:
            result = await client.call_tool("greeting", {})
            return str(result.content[0].text)

    if transport == "http":
        with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
            text = asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    else:
        from mcp import StdioServerParameters

        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "snodo", "run", TARGET, "--transport", "stdio"],
            env=dict(os.environ),  # the test's paths, not the SDK's bare environment
        )
        text = asyncio.run(asyncio.wait_for(scenario(params), 30))
    assert text == EXPECTED
    assert sorted(asked) == ["form", "roots", "sampling"]


def test_the_official_python_client_with_one_round_fails_where_two_are_needed() -> None:
    """The bound above is real: the explicit preferences flow needs two rounds."""

    async def elicit(context: Any, params: Any) -> Any:
        field = next(iter(params.requested_schema["properties"]))
        value = {"theme": "dark", "language": "de", "confirm": True}[field]
        return types.ElicitResult(action="accept", content={field: value})

    async def scenario(url: str) -> None:
        async with mcp_client.Client(
            url, mode="2026-07-28", input_required_max_rounds=1, elicitation_callback=elicit
        ) as client:
            await client.call_tool("preferences", {})

    with (
        serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server,
        pytest.raises(BaseException, match="TaskGroup") as raised,
    ):
        asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    assert "InputRequiredRoundsExceededError" in repr(raised.value)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_snodos_client_in_either_era(era: str) -> None:
    from snodo import Client

    asked: list[str] = []

    async def form(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("form")
        return {"action": "accept", "content": {"language": "de"}}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("sampling")
        return {"role": "assistant", "content": {"type": "text", "text": "Hallo!"}, "model": "m"}

    async def where(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("roots")
        return {"roots": [{"uri": "file:///home/ana/notes", "name": "notes"}]}

    async def scenario(client: Client) -> str:
        async with client:
            result = await client.call_tool("greeting")
            assert client.era == era
            return str(result.content[0].text)

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        client = Client.http(
            f"{server.base}/mcp", era=era, elicitation=form, sampling=sample, roots=where
        )
        assert asyncio.run(asyncio.wait_for(scenario(client), 30)) == EXPECTED
    assert sorted(asked) == ["form", "roots", "sampling"]
