"""A server over HTTP with a key of its process alone says so once, at start-up; one with
a configured secret says nothing."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from snodo.core.state.keyring import SECRET_ENV
from snodo.server import Server
from snodo.transports.http import PER_PROCESS_STATE, HttpApp


def _start_and_stop(app: HttpApp) -> None:
    async def run() -> None:
        incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        async def send(message: Any) -> None:
            if message["type"] == "lifespan.startup.complete":
                await incoming.put({"type": "lifespan.shutdown"})

        await incoming.put({"type": "lifespan.startup"})
        await app({"type": "lifespan"}, incoming.get, send)

    asyncio.run(run())


def test_a_per_process_key_is_said_once_at_start_up(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    with caplog.at_level(logging.WARNING, logger="snodo"):
        _start_and_stop(HttpApp(Server("alone", "1")))
    assert [r.getMessage() for r in caplog.records] == [PER_PROCESS_STATE]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="snodo"):
        _start_and_stop(HttpApp(Server("keyed", "1", state_secret=bytes(32))))
        monkeypatch.setenv(SECRET_ENV, "ab" * 32)
        _start_and_stop(HttpApp(Server("from the environment", "1")))
    assert caplog.records == []
