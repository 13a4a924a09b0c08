"""The per-loop table of running HTTP requests does not keep closed event loops alive."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from snodo.transports import late_requests


def test_a_closed_loop_leaves_the_table() -> None:
    async def touch() -> None:
        late_requests.LateRequests.of_loop(asyncio.get_running_loop())

    gc.collect()  # loops an earlier test left for the collector: not counted here
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
        late = late_requests.LateRequests.of_loop(asyncio.get_running_loop())
        exchange: Any = _Quick()
        late.add(exchange)
        late.remove(exchange)

    gc.collect()  # loops an earlier test left for the collector: not counted here
    before = len(late_requests._BY_LOOP)
    for _ in range(3):
        asyncio.run(one_request())
    gc.collect()
    assert len(late_requests._BY_LOOP) == before


def test_each_loop_has_its_own_table_and_keeps_it() -> None:
    async def tables() -> tuple[Any, Any]:
        return late_requests.LateRequests.of_loop(asyncio.get_running_loop()), (
            late_requests.LateRequests.of_loop(asyncio.get_running_loop())
        )

    first = asyncio.run(tables())
    second = asyncio.run(tables())
    assert first[0] is first[1] and second[0] is second[1]
    assert first[0] is not second[0]  # the table kept from the last loop is not reused
    loops = [asyncio.new_event_loop() for _ in range(2)]
    try:
        seen = [loop.run_until_complete(tables())[0] for loop in loops + loops]
        assert seen[0] is seen[2] and seen[1] is seen[3] and seen[0] is not seen[1]
    finally:
        for loop in loops:
            loop.close()


class _Recorded:
    def __init__(self, watched: list[str], name: str) -> None:
        self.watched, self.name = watched, name

    def start_watching(self) -> None:
        self.watched.append(self.name)


def test_a_request_is_watched_at_the_second_tick_after_it_began() -> None:
    """A tick comes every WATCH_AFTER seconds, so a request is watched once it has run at
    least that long (and at most twice that); one that ended is never watched. The ticks
    are called by hand here, on a loop that never runs its own timer."""
    loop = asyncio.new_event_loop()
    try:
        late = late_requests.LateRequests(loop)
        watched: list[str] = []
        first, ended, second = (_Recorded(watched, name) for name in ("first", "ended", "second"))
        late.add(first)
        late.add(ended)
        late._due()  # first and ended may have begun just now: not yet
        assert watched == [] and late.armed
        late.add(second)
        late.remove(ended)
        late._due()
        assert watched == ["first"]
        late._due()
        assert watched == ["first", "second"]
        late._due()  # nothing left running: the timer is not armed again
        assert watched == ["first", "second"] and not late.armed and not late.running
    finally:
        loop.close()
