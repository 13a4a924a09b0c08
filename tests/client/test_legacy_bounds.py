"""A legacy server's requests to the client: bounded per session and at once, and
checked before any handler runs."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from snodo.client.handlers import InputHandlers
from snodo.client.legacy_session import LegacySession
from snodo.client.limits import ClientLimits
from tests.client.hostile import Scripted

FORM = {
    "jsonrpc": "2.0",
    "method": "elicitation/create",
    "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
}


def session(limits: ClientLimits, asked: list[Any], gate: asyncio.Event | None = None) -> Any:
    async def form(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        if gate is not None:
            await gate.wait()
        return {"action": "decline"}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"}

    inputs = InputHandlers(elicitation=form, url_elicitation=form, sampling=sample)
    return LegacySession(
        Scripted({"result": {}}),  # type: ignore[arg-type]
        info={"name": "t", "version": "0"},
        inputs=inputs,
        on_notification=lambda _: None,
        ids=itertools.count(1),
        limits=limits,
    )


def test_requests_beyond_the_session_cap_are_refused_unanswered() -> None:
    asked: list[Any] = []
    legacy = session(ClientLimits(max_server_requests=3), asked)

    async def main() -> list[dict[str, Any]]:
        return [await legacy._serve({**FORM, "id": n}) for n in range(5)]

    replies = asyncio.run(main())
    assert [("result" in r) for r in replies] == [True, True, True, False, False]
    assert replies[4]["error"]["code"] == -32603 and replies[4]["id"] == 4
    assert len(asked) == 3


def test_requests_beyond_the_pending_cap_are_refused_at_once() -> None:
    asked: list[Any] = []
    gate = asyncio.Event()

    async def main() -> list[dict[str, Any]]:
        legacy = session(ClientLimits(max_pending_server_requests=2), asked, gate)
        tasks = [asyncio.ensure_future(legacy._serve({**FORM, "id": n})) for n in range(4)]
        await asyncio.sleep(0.1)
        gate.set()
        return list(await asyncio.wait_for(asyncio.gather(*tasks), 30))

    replies = asyncio.run(main())
    assert sum("error" in r for r in replies) == 2
    assert len(asked) == 2


def test_undeclared_sub_capabilities_and_unsafe_urls_never_reach_a_handler() -> None:
    asked: list[Any] = []
    legacy = session(ClientLimits(), asked)
    refused = [
        {
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 5, "tools": []},
        },
        {
            "method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 5, "includeContext": "thisServer"},
        },
        {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "go",
                "elicitationId": "e",
                "url": "javascript:alert(1)",
            },
        },
    ]

    async def main() -> list[dict[str, Any]]:
        return [await legacy._serve({"jsonrpc": "2.0", "id": 1, **r}) for r in refused]

    replies = asyncio.run(main())
    assert [r["error"]["code"] for r in replies] == [-32602, -32602, -32602]
    assert asked == []
