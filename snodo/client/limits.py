"""How much a Client accepts from a server, in time and in size: ``ClientLimits``.

A server the user picked may be broken or hostile; none of these bounds is reached by
a server that behaves. Every cap is a ``LimitExceeded`` (a ``ProtocolViolation``) when
crossed, every time bound a ``RequestTimeout``. Defaults:

=============================  ==========  ============================================
field                          default     bounds
=============================  ==========  ============================================
``request_timeout``            300 s       one request on the wire, any era/transport
``max_message_bytes``          16 MiB      one stdio line, HTTP body or SSE event
``max_sse_line_bytes``         16 MiB      one line of an SSE stream (keep-alives too)
``max_notifications``          10,000      notifications received for one request
``max_pages``                  100         pages followed by one ``list_*`` call
``max_items``                  100,000     items one ``list_*`` call keeps
``max_input_requests``         32          input requests in one MRTR round
``max_server_requests``        10,000      requests a legacy server sends per session
``max_pending_server_requests`` 16         of those being answered at once
``close_grace``                2 s         how long ``close()`` waits for a child to exit,
                                           and a given-up task for its ``tasks/cancel``
=============================  ==========  ============================================

A cursor a listing has already returned ends it with ``ProtocolViolation``: following
it again could only repeat pages.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from snodo.client.errors import DeadlineExceeded, RequestTimeout

__all__ = ["ClientLimits", "within"]

T = TypeVar("T")

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ClientLimits:
    """The bounds above; pass ``Client(limits=ClientLimits(max_pages=10))`` to change any."""

    request_timeout: float = 300.0
    max_message_bytes: int = 16 * MIB
    max_sse_line_bytes: int = 16 * MIB
    max_notifications: int = 10_000
    max_pages: int = 100
    max_items: int = 100_000
    max_input_requests: int = 32
    max_server_requests: int = 10_000
    max_pending_server_requests: int = 16
    close_grace: float = 2.0


async def within(
    call: Awaitable[T], limits: ClientLimits, until: float | None, what: str, deadline: float | None
) -> T:
    """Await ``call`` for at most ``request_timeout`` seconds and never past ``until``
    (a ``time.monotonic()`` instant, from ``deadline`` seconds): ``RequestTimeout``, or
    ``DeadlineExceeded`` when the deadline was the tighter bound. The call is
    cancelled, which tells the server where the transport can."""
    budget = limits.request_timeout
    by_deadline = False
    if until is not None and until - time.monotonic() <= budget:
        budget, by_deadline = until - time.monotonic(), True
    if budget <= 0:
        if isinstance(call, Coroutine):
            call.close()  # never awaited: the budget was gone before it began
        raise _expired(limits, what, deadline, by_deadline)
    # Not asyncio.timeout (a timer started and stopped for every request costs more
    # than the rest of the wait here) and not wait_for: on Python 3.11, wait_for
    # returns the result of a call that finished just as the caller was cancelled and
    # drops the cancellation, so a cancelled flow would go on polling.
    task = asyncio.current_task()
    assert task is not None
    watch = _watch()
    timer = _Timer(task)
    watch.add(timer, watch.loop.time() + budget)
    try:
        return await call
    except asyncio.CancelledError:
        # Our own cancellation becomes the timeout; one from elsewhere as well (the
        # caller cancelled too) stays a cancellation.
        if timer.fired:
            timer.fired = False
            if task.uncancel() <= timer.cancelling:
                raise _expired(limits, what, deadline, by_deadline) from None
        raise
    finally:
        watch.due.pop(timer, None)
        if timer.fired:  # the call ended some other way as its budget ran out
            task.uncancel()


class _Timer:
    """Cancels ``task`` when its budget is spent, remembering that it did."""

    __slots__ = ("cancelling", "fired", "task")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self.task = task
        self.cancelling = task.cancelling()
        self.fired = False

    def fire(self) -> None:
        self.fired = True
        self.task.cancel()


class _Watch:
    """The budgets of the requests awaited on one loop, and one timer for the earliest.

    A request registers its due time and takes it out when done, two dict steps; the
    timer is moved only for a due time earlier than the one it waits for (a tighter
    deadline). When it goes off, the requests past due are cancelled and the timer is
    set for the earliest one left, if any: an idle client has no timer."""

    SLACK = 0.001
    """A loop may run a timer up to its clock's resolution early: due within this is due."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.due: dict[_Timer, float] = {}
        self.armed = math.inf
        self.handle: asyncio.TimerHandle | None = None

    def add(self, timer: _Timer, at: float) -> None:
        self.due[timer] = at
        if at < self.armed:
            if self.handle is not None:
                self.handle.cancel()
            self.armed = at
            self.handle = self.loop.call_at(at, self.fire)

    def fire(self) -> None:
        self.handle, self.armed = None, math.inf
        now = self.loop.time() + self.SLACK
        spent = [timer for timer, at in self.due.items() if at <= now]
        for timer in spent:
            del self.due[timer]
            timer.fire()
        if self.due:
            at = min(self.due.values())
            self.armed = at
            self.handle = self.loop.call_at(at, self.fire)


_WATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watch] = weakref.WeakKeyDictionary()


def _watch() -> _Watch:
    loop = asyncio.get_running_loop()
    watch = _WATCHES.get(loop)
    if watch is None:
        watch = _WATCHES[loop] = _Watch(loop)
    return watch


def _expired(
    limits: ClientLimits, what: str, deadline: float | None, by_deadline: bool
) -> RequestTimeout:
    if by_deadline:
        return DeadlineExceeded(f"{what} did not complete within {deadline} s")
    return RequestTimeout(f"{what}: no answer within {limits.request_timeout} s (request_timeout)")
