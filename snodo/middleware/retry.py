"""``Retry``: run a handler again when it fails with an exception named as passing.

``Retry(ConnectionError, attempts=3)`` runs the request's handler (and the middleware
after this one) up to three times while it fails with a ``ConnectionError``: a tool
whose function raised it (its ``isError`` result carries the exception,
``snodo.server.invoke.FailedCall``), a resource or prompt whose function raised it (the
internal error the server made of it), or anything after this middleware that raised
it. Between attempts it waits ``delay`` seconds, then ``backoff`` times longer each
time. The last attempt's answer is the request's. Name only what is safe to run twice:
a failed call may have done part of its work.
"""

from __future__ import annotations

import asyncio
from typing import Any

from snodo.core.context import Context
from snodo.core.types import CallNext
from snodo.server.invoke import FailedCall

__all__ = ["Retry"]


class Retry:
    """Up to ``attempts`` runs while the failure is one of ``exceptions``."""

    def __init__(
        self,
        *exceptions: type[Exception],
        attempts: int = 3,
        delay: float = 0.1,
        backoff: float = 2.0,
    ) -> None:
        if not exceptions:
            raise ValueError("name the exceptions worth another attempt")
        if attempts < 2:
            raise ValueError("attempts is at least 2")
        if delay < 0 or backoff < 1:
            raise ValueError("delay is at least 0 and backoff at least 1")
        self.exceptions = exceptions
        self.attempts = attempts
        self.delay = delay
        self.backoff = backoff
        self.retried = 0
        """Attempts made beyond the first, so far."""

    def passing(self, exc: BaseException | None) -> bool:
        """Whether ``exc``, or the exception the server turned into it, is worth another
        attempt."""
        if exc is None:
            return False
        return isinstance(exc, self.exceptions) or isinstance(exc.__cause__, self.exceptions)

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        wait = self.delay
        for attempt in range(1, self.attempts + 1):
            last = attempt == self.attempts
            try:
                outcome = await call_next(ctx)
            except Exception as exc:
                if last or not self.passing(exc):
                    raise
            else:
                failed = isinstance(outcome, FailedCall) and self.passing(outcome.exception)
                if last or not failed:
                    return outcome
            self.retried += 1
            await asyncio.sleep(wait)
            wait *= self.backoff
        raise AssertionError("unreachable: the last attempt returns or raises")
