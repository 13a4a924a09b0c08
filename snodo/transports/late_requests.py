"""Which HTTP requests have run long enough to watch for their client leaving.

Watching costs a task per request; most requests end within WATCH_AFTER, so one timer
per event loop looks over the running ones and starts a watcher only for the late.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Protocol

__all__ = ["WATCH_AFTER", "LateRequests", "Watchable"]

WATCH_AFTER = 0.05
"""Seconds a request may run before a task starts watching for the client leaving."""


class Watchable(Protocol):
    """A running request that can start watching for its client leaving."""

    def start_watching(self) -> None: ...


class LateRequests:
    """Requests running on this event loop, oldest first, with when each began.

    One timer for all of them starts the disconnect watcher of each request still
    running WATCH_AFTER seconds after it began, in place of a timer armed and cancelled
    per request: most requests end well before, and then cost a dict insert and delete.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # A proxy, not the loop: a strong reference from the value would keep the
        # WeakKeyDictionary's key, and so every closed loop, alive.
        self.loop = weakref.proxy(loop)
        self.loop_ref = weakref.ref(loop)
        self.running: dict[Watchable, float] = {}
        self.armed = False  # a flag, not the TimerHandle, which holds the loop too

    @classmethod
    def of_running_loop(cls) -> LateRequests:
        loop = asyncio.get_running_loop()
        last = _LAST[0]
        if last is not None and last.loop_ref() is loop:  # one loop serves them all
            return last
        late = _BY_LOOP.get(loop)
        if late is None:
            late = _BY_LOOP[loop] = cls(loop)
        _LAST[0] = late
        return late

    def add(self, exchange: Watchable) -> None:
        self.running[exchange] = began = self.loop.time()
        if not self.armed:
            self.armed = True
            self.loop.call_at(began + WATCH_AFTER, self._due)

    def remove(self, exchange: Watchable) -> None:
        self.running.pop(exchange, None)

    def _due(self) -> None:
        self.armed = False
        late = self.loop.time() - WATCH_AFTER
        for exchange, began in list(self.running.items()):
            if began > late:  # this one and all after it began too recently
                self.armed = True
                self.loop.call_at(began + WATCH_AFTER, self._due)
                return
            del self.running[exchange]
            exchange.start_watching()


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LateRequests] = (
    weakref.WeakKeyDictionary()
)
_LAST: list[LateRequests | None] = [None]
"""The table ``of_running_loop`` handed out last: a server runs one loop, and comparing
it costs less than a lookup in the weak dictionary (which makes a weak reference)."""
