"""Where a sync handler runs: a bounded pool of threads, off the event loop.

A plain ``def`` handler that blocks (``requests``, a database driver, ``time.sleep``)
would stall every other request of its worker, listen streams and health checks
included, if it ran on the loop. So each call runs in a thread of the server's pool (at
most ``limit`` at once; more wait their turn), with the request's context variables
(an OpenTelemetry span, say), and a ``Context`` whose ``log`` and ``report_progress``
hand their notifications back to the loop in order, before the result. A handler
registered with ``inline=True`` runs on the loop instead: for cheap functions that never
block, it saves the hop.

A request that is cancelled (the client went away, ``notifications/cancelled``, a
timeout) stops waiting at once; the thread itself cannot be stopped and runs to its
end, its result dropped.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from snodo.context import Context, Emit, refilled

__all__ = ["DEFAULT_THREAD_LIMIT", "Threads"]

DEFAULT_THREAD_LIMIT = 40
"""Sync handlers of one worker that run at once, as the peers' thread limiters allow."""


class Threads:
    """The thread pool a server's sync handlers run in (made on first use)."""

    __slots__ = ("_pool", "limit")

    def __init__(self, limit: int = DEFAULT_THREAD_LIMIT) -> None:
        if not isinstance(limit, int) or limit < 1:
            raise ValueError("thread_limit must be a positive integer")
        self.limit = limit
        self._pool: ThreadPoolExecutor | None = None

    async def run(self, function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
        """``function(**kwargs)`` in a thread of the pool: its value, or what it raised,
        raised here on the loop with the function's own frames (an exception that came
        back through the executor's future would lose them where the caller is compiled).
        """
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.limit, thread_name_prefix="snodo-handler")
        call = functools.partial(_caught, function, kwargs)
        context = contextvars.copy_context()
        value = await asyncio.get_running_loop().run_in_executor(self._pool, context.run, call)
        if type(value) is _Raised:
            raise value.error
        return value

    def close(self) -> None:
        """Stop taking calls; calls not yet started are dropped, running ones finish."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


@dataclass(frozen=True, slots=True)
class _Raised:
    error: Exception


def _caught(function: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """``function(**kwargs)`` in the thread, what it raises handed back as a value."""
    try:
        return function(**kwargs)
    except Exception as error:
        return _Raised(error)


def threaded(ctx: Context) -> Context:
    """``ctx`` for a handler in a thread: what it emits is handed to the loop, in order."""
    emit = ctx.emit
    loop = asyncio.get_running_loop()

    def hand_over(message: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(emit, message)

    handed: Emit = hand_over
    return refilled(ctx, emit=handed)
