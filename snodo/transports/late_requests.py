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
"""Seconds a request runs before a task starts watching for the client leaving: at least
this, at most twice this (the table looks over its requests once per WATCH_AFTER)."""


class Watchable(Protocol):
    """A running request that can start watching for its client leaving."""

    def start_watching(self) -> None: ...


class LateRequests:
    """Requests running on this event loop, oldest first, each with the tick it began in.

    One timer for all of them ticks every WATCH_AFTER seconds while any runs, and starts
    the disconnect watcher of each request that began before the previous tick, so has
    run at least WATCH_AFTER: in place of a timer armed and cancelled per request. Most
    requests end well before, and then cost a dict insert and delete, no clock read.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # A proxy, not the loop: a strong reference from the value would keep the
        # WeakKeyDictionary's key, and so every closed loop, alive.
        self.loop = weakref.proxy(loop)
        self.loop_ref = weakref.ref(loop)
        self.running: dict[Watchable, int] = {}
        self.tick = 0
        self.armed = False  # a flag, not the TimerHandle, which holds the loop too

    @classmethod
    def of_loop(cls, loop: asyncio.AbstractEventLoop) -> LateRequests:
        """The table of ``loop``, the running one."""
        last = _LAST[0]
        if last is not None and last.loop_ref() is loop:  # one loop serves them all
            return last
        late = _BY_LOOP.get(loop)
        if late is None:
            late = _BY_LOOP[loop] = cls(loop)
        _LAST[0] = late
        return late

    def add(self, exchange: Watchable) -> None:
        self.running[exchange] = self.tick
        if not self.armed:
            self.armed = True
            self.loop.call_later(WATCH_AFTER, self._due)

    def remove(self, exchange: Watchable) -> None:
        self.running.pop(exchange, None)

    def _due(self) -> None:
        self.tick += 1
        recent = self.tick - 1  # began since the tick before this one: not yet due
        for exchange, began in list(self.running.items()):
            if began >= recent:  # this one and all after it began too recently
                break
            del self.running[exchange]
            exchange.start_watching()
        self.armed = bool(self.running)
        if self.armed:
            self.loop.call_later(WATCH_AFTER, self._due)


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LateRequests] = (
    weakref.WeakKeyDictionary()
)
_LAST: list[LateRequests | None] = [None]
"""The table ``of_loop`` handed out last: a server runs one loop, and comparing
it costs less than a lookup in the weak dictionary (which makes a weak reference)."""
