"""The per-loop table of running HTTP requests does not keep closed event loops alive."""

from __future__ import annotations

import asyncio
import gc

from snodo.transports import http


def test_a_closed_loop_leaves_the_table() -> None:
    async def touch() -> None:
        http._LateRequests.of_running_loop()

    before = len(http._LATE)
    for _ in range(3):
        asyncio.run(touch())
    gc.collect()
    assert len(http._LATE) == before
