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
import time
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass
from typing import TypeVar

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
    try:
        if budget <= 0:
            raise TimeoutError
        # asyncio.timeout, not wait_for: on Python 3.11, wait_for returns the result of a
        # call that finished just as the caller was cancelled and drops the cancellation,
        # so a cancelled flow would go on polling.
        async with asyncio.timeout(budget):
            return await call
    except TimeoutError:
        if isinstance(call, Coroutine):
            call.close()  # never awaited when the budget was gone before it began
        if by_deadline:
            raise DeadlineExceeded(f"{what} did not complete within {deadline} s") from None
        raise RequestTimeout(
            f"{what}: no answer within {limits.request_timeout} s (request_timeout)"
        ) from None
