"""What a proxy hands on of a backend's result, in process (a ``MemoryTransport``
backend): the backend's own ``_meta`` keys and content as they came, its server info
replaced by the proxy's, the front's arguments as sent; the result the client decoded
is reused, never one the backend keeps."""

from __future__ import annotations

import asyncio
from typing import Any

from snodo import Server
from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.gateway import proxy
from snodo_wire import CallToolResult
from tests.support.wire import request

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def test_a_result_passes_on_with_its_own_meta_and_the_proxys_server_info() -> None:
    backend = Server("behind", "2.0.0")
    kept = CallToolResult.model_validate(
        {
            "resultType": "complete",
            "content": [{"type": "text", "text": "traced"}],
            "_meta": {"example.com/trace": "t-1"},
        }
    )
    seen: list[dict[str, Any]] = []

    @backend.tool(inline=True)
    def traced(text: str, times: int) -> CallToolResult:
        seen.append({"text": text, "times": times})
        return kept  # the same object each call: the proxy must not change it

    @backend.tool(inline=True)
    def plain(text: str) -> str:
        return text

    front = proxy(lambda **options: Client(MemoryTransport(backend), **options), name="front")

    async def scenario() -> list[dict[str, Any]]:
        await front.startup()
        try:
            results = []
            for number in range(2):
                arguments = {"text": "hi", "times": 3}
                message = request("tools/call", {"name": "traced", "arguments": arguments})
                reply = await front.handle({**message, "id": number})
                assert reply.response is not None
                results.append(reply.response)
            message = request("tools/call", {"name": "plain", "arguments": {"text": "x"}})
            reply = await front.handle(message)
            assert reply.response is not None
            results.append(reply.response)
            return results
        finally:
            await front.shutdown()

    first, second, plain_reply = asyncio.run(scenario())
    assert seen == [{"text": "hi", "times": 3}] * 2
    for number, reply in enumerate((first, second)):
        assert reply["id"] == number
        result = reply["result"]
        assert result["resultType"] == "complete"
        assert result["content"] == [{"type": "text", "text": "traced"}]
        assert result["_meta"]["example.com/trace"] == "t-1"
        assert result["_meta"][SERVER_INFO]["name"] == "front"
    assert kept.model_dump(by_alias=True, exclude_none=True)["_meta"] == {
        "example.com/trace": "t-1"
    }
    plain_result = plain_reply["result"]
    assert plain_result["content"] == [{"type": "text", "text": "x"}]
    assert set(plain_result["_meta"]) == {SERVER_INFO}
    assert plain_result["_meta"][SERVER_INFO]["name"] == "front"
