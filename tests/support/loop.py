"""One event loop that several tests share, so async clients can span them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class Loop:
    """One event loop shared by the tests of a module."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.cleanups: list[Callable[[], Awaitable[None]]] = []

    def run(self, awaitable: Awaitable[T], timeout: float = 60.0) -> T:
        """Run ``awaitable`` on the shared loop. ``timeout`` only stops a hung test: it
        is no time asserted, so it leaves room for a server process to start on a
        machine whose cores are all busy."""

        async def bounded() -> T:
            return await asyncio.wait_for(awaitable, timeout)

        return self.loop.run_until_complete(bounded())

    def __enter__(self) -> Loop:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            for cleanup in reversed(self.cleanups):
                self.loop.run_until_complete(cleanup())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()
