"""Where a sync handler runs: a bounded set of threads, off the event loop.

A plain ``def`` handler that blocks (``requests``, a database driver, ``time.sleep``)
would stall every other request of its worker, listen streams and health checks
included, if it ran on the loop. So each call runs in one of the server's threads (at
most ``limit`` of them; more calls wait their turn), with the request's context
variables (an OpenTelemetry span, say), and a ``Context`` whose ``log`` and
``report_progress`` hand their notifications back to the loop in order, before the
result. A handler registered with ``inline=True`` runs on the loop instead: for cheap
functions that never block, it saves the hop.

The hop is the pool's own, not ``run_in_executor``'s: a call is one tuple on a
``queue.SimpleQueue`` that the threads take from, and its value comes back with one
``call_soon_threadsafe`` onto an asyncio future; there is no ``concurrent.futures``
future, no chaining of one future to another and no semaphore per call, which together
cost several times the handler's own call (``bench/threads.py``). A thread is started
when a call finds every thread busy, up to ``limit``; each then lives until ``close``,
and the interpreter's exit waits for a call still running in one, not for idle ones.

A request that is cancelled (the client went away, ``notifications/cancelled``, a
timeout) stops waiting at once; a call not yet begun is then skipped, and one already
running cannot be stopped and runs to its end, its result dropped.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import queue
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from snodo.core.context import Context, Emit, refilled

__all__ = ["DEFAULT_THREAD_LIMIT", "Threads"]

DEFAULT_THREAD_LIMIT = 40
"""Sync handlers of one worker that run at once, as the peers' thread limiters allow."""

_Call = tuple[
    asyncio.AbstractEventLoop,
    "asyncio.Future[Any]",
    contextvars.Context,
    Callable[..., Any],
    dict[str, Any],
]
"""One call on the queue: the loop and future to hand its value to, and what to run."""


class Threads:
    """The threads a server's sync handlers run in (started as calls need them)."""

    __slots__ = ("_pool", "limit")

    def __init__(self, limit: int = DEFAULT_THREAD_LIMIT) -> None:
        if not isinstance(limit, int) or limit < 1:
            raise ValueError("Limits(threads=...) must be a positive integer")
        self.limit = limit
        self._pool: _Pool | None = None

    async def run(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """``function(**kwargs)`` in one of the threads: its value, or what it raised,
        raised here on the loop with the function's own frames."""
        pool = self._pool
        if pool is None:
            pool = self._pool = _Pool(self.limit)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        pool.put((loop, future, contextvars.copy_context(), function, kwargs))
        value = await future
        if type(value) is _Raised:
            raise value.error
        return value

    def close(self) -> None:
        """Stop taking calls: calls not yet begun are dropped (their requests end
        cancelled), running ones finish, and each thread then ends. A call after this
        starts afresh."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


class _Pool:
    """The threads and their queue, from the first call until ``close``."""

    __slots__ = ("__weakref__", "busy", "calls", "limit", "threads")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self.threads: list[threading.Thread] = []
        _POOLS.add(self)
        self.busy = 0
        """Calls handed to the threads whose value has not come back to the loop yet:
        while fewer than the threads, one of them is free for the next."""

    def put(self, call: _Call) -> None:
        if self.busy >= len(self.threads) and len(self.threads) < self.limit:
            # A daemon, so that an idle one never holds the interpreter's exit; one still
            # running a call is waited for then (``_finish_at_exit``).
            thread = threading.Thread(
                target=self.work, name=f"snodo-handler_{len(self.threads)}", daemon=True
            )
            thread.start()
            self.threads.append(thread)
        self.busy += 1
        self.calls.put(call)

    def work(self) -> None:
        """A thread's loop: take a call, run it, hand its value back; ``None`` ends it."""
        take = self.calls.get
        while (call := take()) is not None:
            loop, future, context, function, kwargs = call
            value: Any = None
            if not future.cancelled():  # else the request went away before its turn
                try:
                    value = context.run(function, **kwargs)
                except BaseException as error:
                    value = _Raised(error)
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits
                loop.call_soon_threadsafe(self.settle, future, value)
            del call, future, context, function, kwargs, value

    def settle(self, future: asyncio.Future[Any], value: Any) -> None:
        """On the loop: a call's value to its future, unless the request went away."""
        self.busy -= 1
        if not future.done():
            future.set_result(value)

    def close(self) -> None:
        while True:
            try:
                call = self.calls.get_nowait()
            except queue.Empty:
                break
            if call is not None and not call[0].is_closed():
                call[0].call_soon_threadsafe(call[1].cancel)
        for _ in self.threads:
            self.calls.put(None)


_POOLS: weakref.WeakSet[_Pool] = weakref.WeakSet()
"""Every pool whose threads may still run (a thread holds its pool)."""


@atexit.register
def _finish_at_exit() -> None:
    """At the interpreter's exit, a call still running in a thread finishes first, as a
    worker that shuts down lets its handlers finish; an idle thread just ends."""
    pools = list(_POOLS)
    for pool in pools:
        for _ in pool.threads:
            pool.calls.put(None)
    for pool in pools:
        for thread in pool.threads:
            thread.join()


@dataclass(frozen=True, slots=True)
class _Raised:
    error: BaseException


def threaded(ctx: Context) -> Context:
    """``ctx`` for a handler in a thread: what it emits is handed to the loop, in order."""
    emit = ctx.emit
    loop = asyncio.get_running_loop()

    def hand_over(message: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(emit, message)

    handed: Emit = hand_over
    return refilled(ctx, emit=handed)
