"""``snodo proxy`` in front of a legacy backend, several front clients asking at once
(each a client address: 127.0.0.1, 127.0.0.2, ...), as real processes.

- A legacy HTTP backend (snodo's own, ``--era legacy``), whose sessions bound the
  questions waiting for their client at 16: one front client leaving 16 calls
  unanswered no longer blocks another's, which is asked and answered in a session of
  its own; with ``--backend-sessions 1`` a second client's call waits for the place
  instead of failing.
- A legacy stdio backend (PyPI mcp 1.30's FastMCP): a second client's call made while
  the first one's question is open waits its turn, then asks and is answered; one
  client's two calls at once take their turns likewise.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.processes import Serving, serving, snodo_run

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="127.0.0.2 as a source")

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
}


def snodo_proxy(*backend: str) -> Any:
    return lambda port: [
        *(sys.executable, "-m", "snodo", "proxy", "--transport", "http"),
        *("--port", str(port), *backend),
    ]


class Front:
    """A modern front client at one address: calls, and retries with answers."""

    def __init__(self, url: str, address: str) -> None:
        self.url = url
        self.http = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(local_address=address), timeout=60
        )
        self.ids = iter(range(1, 10_000))

    async def call(self, name: str, arguments: dict[str, Any], **retry: Any) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments, "_meta": META, **retry}
        body = {"jsonrpc": "2.0", "id": next(self.ids), "method": "tools/call", "params": params}
        answer = await self.http.post(self.url, json=body, headers={**HEADERS, "mcp-name": name})
        text = answer.text
        if answer.headers["content-type"].startswith("text/event-stream"):
            data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
            text = [d for d in data if '"id"' in d][-1]
        reply: dict[str, Any] = json.loads(text)
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    async def answer(
        self, name: str, arguments: dict[str, Any], asked: dict[str, Any], city: str
    ) -> str:
        """Answer the one question of ``asked`` with ``city``; the call's text."""
        assert asked["resultType"] == "input_required", asked
        [(key, question)] = asked["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        responses = {key: {"action": "accept", "content": {"city": city}}}
        done = await self.call(
            name, arguments, inputResponses=responses, requestState=asked["requestState"]
        )
        assert done["resultType"] == "complete", done
        return str(done["content"][0]["text"])

    async def close(self) -> None:
        await self.http.aclose()


@pytest.fixture(scope="module")
def legacy_http() -> Iterator[Serving]:
    """The proxy in front of snodo's own server over HTTP, spoken to as legacy."""
    target = "tests/legacy/shared_server.py:server"
    with (
        serving(lambda port: snodo_run(target, "http", "--port", str(port))) as backend,
        serving(snodo_proxy("--era", "legacy", f"{backend.base}/mcp")) as proxy,
    ):
        yield proxy


def test_one_client_leaving_its_questions_open_does_not_block_another(
    legacy_http: Serving,
) -> None:
    url = f"{legacy_http.base}/mcp"

    async def scenario() -> tuple[list[dict[str, Any]], str]:
        greedy, other = Front(url, "127.0.0.1"), Front(url, "127.0.0.2")
        try:
            # 16 calls, each asked a city, none answered: the backend session of this
            # client has as many questions waiting as it allows.
            left = await asyncio.gather(*(greedy.call("weather", {}) for _ in range(16)))
            asked = await other.call("weather", {})
            return left, await other.answer("weather", {}, asked, "Oslo")
        finally:
            await greedy.close()
            await other.close()

    left, text = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert all(result["resultType"] == "input_required" for result in left)
    assert text.startswith("sunny in Oslo")


@pytest.fixture(scope="module")
def legacy_stdio() -> Iterator[Serving]:
    backend = [str(legacy_sdk_python()), "tests/client/legacy_server.py", "stdio"]
    with serving(snodo_proxy("--", *backend)) as proxy:
        yield proxy


def test_a_second_clients_question_while_the_first_ones_is_open(legacy_stdio: Serving) -> None:
    url = f"{legacy_stdio.base}/mcp"

    async def scenario() -> tuple[str, str]:
        first, second = Front(url, "127.0.0.1"), Front(url, "127.0.0.2")
        try:
            open_question = await first.call("forecast", {"days": 1})
            waiting = asyncio.ensure_future(second.call("forecast", {"days": 2}))
            mine = await first.answer("forecast", {"days": 1}, open_question, "Oslo")
            theirs = await second.answer("forecast", {"days": 2}, await waiting, "Bergen")
            return mine, theirs
        finally:
            await first.close()
            await second.close()

    mine, theirs = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert (mine, theirs) == ("Oslo: sunny for 1 days", "Bergen: sunny for 2 days")


def test_one_clients_two_calls_at_once_take_their_turns(legacy_stdio: Serving) -> None:
    url = f"{legacy_stdio.base}/mcp"

    async def scenario() -> list[str]:
        front = Front(url, "127.0.0.3")
        try:
            calls = {
                asyncio.ensure_future(front.call("forecast", {"days": days})): days
                for days in (3, 4)
            }
            texts: list[str] = []
            pending = set(calls)
            while pending:  # the one whose turn it is asks; the other waits for it
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for call in done:
                    arguments = {"days": calls[call]}
                    texts.append(await front.answer("forecast", arguments, call.result(), "Tromsø"))
            return sorted(texts)
        finally:
            await front.close()

    texts = asyncio.run(asyncio.wait_for(scenario(), 90))
    assert texts == ["Tromsø: sunny for 3 days", "Tromsø: sunny for 4 days"]


def test_beyond_the_sessions_bound_a_call_waits_for_its_place() -> None:
    target = "tests/legacy/shared_server.py:server"

    async def scenario(url: str) -> tuple[bool, str, str]:
        first, second = Front(url, "127.0.0.1"), Front(url, "127.0.0.2")
        try:
            open_question = await first.call("weather", {})
            waiting = asyncio.ensure_future(second.call("weather", {}))
            await asyncio.sleep(1)
            queued = not waiting.done()  # the one place is the first client's, busy
            mine = await first.answer("weather", {}, open_question, "Oslo")
            theirs = await second.answer("weather", {}, await waiting, "Bergen")
            return queued, mine, theirs
        finally:
            await first.close()
            await second.close()

    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as backend:
        bounded = snodo_proxy("--era", "legacy", "--backend-sessions", "1", f"{backend.base}/mcp")
        with serving(bounded) as proxy:
            done = asyncio.run(asyncio.wait_for(scenario(f"{proxy.base}/mcp"), 90))
    queued, mine, theirs = done
    assert queued
    assert mine.startswith("sunny in Oslo") and theirs.startswith("sunny in Bergen")
