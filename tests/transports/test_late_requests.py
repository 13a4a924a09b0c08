"""The per-loop table of running HTTP requests does not keep closed event loops alive."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from snodo.transports import late_requests


def test_a_closed_loop_leaves_the_table() -> None:
    async def touch() -> None:
        late_requests.LateRequests.of_running_loop()

    before = len(late_requests._BY_LOOP)
    for _ in range(3):
        asyncio.run(touch())
    gc.collect()
    assert len(late_requests._BY_LOOP) == before


class _Quick:
    """Stands in for an exchange that ends before its watcher is due."""

    def start_watching(self) -> None:
        raise AssertionError("a request this short is never watched")


def test_a_loop_closed_while_its_timer_is_pending_leaves_the_table() -> None:
    async def one_request() -> None:
        late = late_requests.LateRequests.of_running_loop()
        exchange: Any = _Quick()
        late.add(exchange)
        late.remove(exchange)

    before = len(late_requests._BY_LOOP)
    for _ in range(3):
        asyncio.run(one_request())
    gc.collect()
    assert len(late_requests._BY_LOOP) == before
