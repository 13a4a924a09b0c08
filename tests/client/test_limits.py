"""The client's time bounds (``snodo.client.limits.within``): one watch per loop holds
every request's budget with a single timer, so a tighter deadline must still end its
call while longer ones run on, a cancellation from elsewhere must stay a cancellation,
and an idle client must keep no timer. On asyncio's loop and on uvloop's (the proxy's)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from snodo.client.errors import DeadlineExceeded, RequestTimeout
from snodo.client.limits import _WATCHES, ClientLimits, within

LOOPS: dict[str, Callable[[Coroutine[Any, Any, Any]], Any]] = {
    "asyncio": asyncio.run,
    "uvloop": uvloop.run,
}
BOUND = 60.0
"""How long a test waits for what should end at once: a hang fails it, never a timing."""


@pytest.mark.parametrize("loop", LOOPS)
def test_a_tighter_deadline_ends_its_call_while_a_longer_budget_runs_on(loop: str) -> None:
    async def main() -> tuple[str, type[BaseException]]:
        release = asyncio.Event()

        async def long() -> str:
            await release.wait()
            return "answered"

        async def never() -> None:
            await asyncio.Event().wait()

        limits = ClientLimits(request_timeout=300)
        running = asyncio.create_task(within(long(), limits, None, "long", None))
        await asyncio.sleep(0)  # the long budget is watched first
        with pytest.raises(DeadlineExceeded) as raised:
            await asyncio.wait_for(
                within(never(), limits, time.monotonic() + 0.05, "short", 0.05), BOUND
            )
        assert not running.done()
        release.set()
        return await asyncio.wait_for(running, BOUND), raised.type

    assert LOOPS[loop](main()) == ("answered", DeadlineExceeded)


@pytest.mark.parametrize("loop", LOOPS)
def test_request_timeout_ends_a_silent_call(loop: str) -> None:
    async def main() -> None:
        async def never() -> None:
            await asyncio.Event().wait()

        with pytest.raises(RequestTimeout, match="request_timeout") as raised:
            await asyncio.wait_for(
                within(never(), ClientLimits(request_timeout=0.05), None, "x", None), BOUND
            )
        assert not isinstance(raised.value, DeadlineExceeded)
        # The task was cancelled once, by the budget, and that cancellation was spent.
        task = asyncio.current_task()
        assert task is not None and task.cancelling() == 0

    LOOPS[loop](main())


@pytest.mark.parametrize("loop", LOOPS)
def test_a_cancellation_from_elsewhere_stays_a_cancellation(loop: str) -> None:
    async def main() -> None:
        started = asyncio.Event()

        async def waits() -> None:
            started.set()
            await asyncio.Event().wait()

        task = asyncio.create_task(within(waits(), ClientLimits(), None, "x", None))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not _WATCHES[asyncio.get_running_loop()].due

    LOOPS[loop](main())


@pytest.mark.parametrize("loop", LOOPS)
def test_an_idle_client_keeps_no_timer(loop: str) -> None:
    async def main() -> None:
        async def answer() -> int:
            await asyncio.sleep(0)
            return 1

        limits = ClientLimits(request_timeout=0.05)
        assert [await within(answer(), limits, None, "x", None) for _ in range(3)] == [1, 1, 1]
        watch = _WATCHES[asyncio.get_running_loop()]
        assert not watch.due  # every finished call took its budget out
        assert watch.handle is not None  # the timer for the first budget, not yet gone off
        while watch.handle is not None:  # it goes off, finds nothing due, and is not set again
            await asyncio.sleep(0.01)
        assert watch.due == {}

    LOOPS[loop](asyncio.wait_for(main(), BOUND))
