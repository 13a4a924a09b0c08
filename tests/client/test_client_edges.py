"""Client behaviour at the edges of what servers send."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx
import pytest

from snodo.client import Client, Flow, RequestError
from snodo.client.transports import HttpTransport, TransportError


class Scripted:
    """A transport that answers each request with the next scripted result."""

    def __init__(self, *results: dict[str, Any]) -> None:
        self.results = list(results)
        self.sent: list[dict[str, Any]] = []

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: Any
    ) -> dict[str, Any]:
        self.sent.append(message)
        return {"jsonrpc": "2.0", "id": message["id"], "result": self.results.pop(0)}

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        yield {}

    async def close(self) -> None:
        return None


def test_a_result_without_result_type_is_complete_and_not_retried() -> None:
    transport = Scripted({"content": [{"type": "text", "text": "old server"}]})
    result = asyncio.run(Client(transport).call_tool("legacy"))
    assert result.content[0].text == "old server"
    assert len(transport.sent) == 1


def test_resume_with_explicit_empty_answers_sends_them() -> None:
    transport = Scripted(
        {"resultType": "input_required", "requestState": "s1"},
        {"resultType": "complete", "content": []},
    )

    async def main() -> None:
        client = Client(transport)
        flow = await client.call_tool("t", manual=True)
        assert isinstance(flow, Flow)
        await client.resume(flow, {})

    asyncio.run(main())
    retry = transport.sent[1]["params"]
    assert retry["inputResponses"] == {} and retry["requestState"] == "s1"


def test_an_error_without_an_id_reaches_the_caller() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
        return httpx.Response(
            400, content=json.dumps(body), headers={"content-type": "application/json"}
        )

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = Client(HttpTransport("http://127.0.0.1:9/mcp", client=http), era="modern")
    with pytest.raises(RequestError) as info:
        asyncio.run(client.discover())
    assert info.value.code == -32700


@pytest.mark.parametrize("kind", ["application/json", "text/event-stream"])
def test_an_answer_with_a_number_beyond_a_double_is_not_read(kind: str) -> None:
    """1e400 would read as infinity; the client refuses it as it refuses NaN."""
    text = '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","n":1e400}}'
    content = text if kind == "application/json" else f"event: message\ndata: {text}\n\n"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content, headers={"content-type": kind})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    client = Client(HttpTransport("http://127.0.0.1:9/mcp", client=http))
    with pytest.raises(TransportError):
        asyncio.run(client.discover())
