"""``ErrorHandling``: failures counted, turned into the answers the application chooses,
and masked where nothing chose one.

A tool's untyped exception is its ``isError`` result (server/tools.mdx: the model reads
it); a resource's or prompt's is an internal error whose detail stays in the log;
anything raised after this middleware the same. ``ErrorHandling`` sees each with the
exception that caused it, and:

* ``map``: by exception type (the first of its classes, most derived first), what the
  caller gets instead: a message (a tool's ``isError`` text, else an error's message),
  an ``McpError`` (raised as it is, for a tool too), or a function of the exception
  giving either;
* ``mask``: a tool failure nothing maps reaches the caller as a generic message (its
  text may hold a SQL error, a path, a secret); the detail is logged;
* ``counts``: how many of each failure it saw, by ``method`` and JSON-RPC code, or
  ``method isError`` for a tool's error result.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from snodo.core.context import Context
from snodo.core.errors import InternalError, McpError
from snodo.core.types import CallNext
from snodo.server.invoke import FailedCall
from snodo.server.tools import masked

__all__ = ["ErrorHandling", "Mapped"]

log = logging.getLogger("snodo.middleware")

Mapped = str | McpError | Callable[[BaseException], "str | McpError"]
"""What one exception type is turned into."""


class ErrorHandling:
    """Count failures; ``map`` them by exception type; ``mask`` the tool failures left."""

    def __init__(
        self,
        *,
        map: Mapping[type[BaseException], Mapped] | None = None,
        mask: bool = False,
    ) -> None:
        self.map = dict(map or {})
        self.mask = mask
        self.counts: Counter[str] = Counter()

    def mapped(self, exc: BaseException | None) -> str | McpError | None:
        """What ``exc`` is turned into, or None when nothing maps it."""
        if exc is None:
            return None
        for kind in type(exc).__mro__:
            chosen = self.map.get(kind)
            if chosen is not None:
                answer = chosen(exc) if callable(chosen) else chosen
                if not isinstance(answer, (str, McpError)):
                    raise TypeError(f"ErrorHandling's map gave {answer!r}, not a str or McpError")
                return answer
        return None

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        method = ctx.request_method
        try:
            outcome = await call_next(ctx)
        except McpError as exc:
            self.counts[f"{method} {exc.code}"] += 1
            cause = exc.__cause__ if isinstance(exc, InternalError) else None
            chosen = self.mapped(cause)
            if chosen is None:
                raise
            raise (chosen if isinstance(chosen, McpError) else McpError(chosen)) from cause
        except Exception as exc:
            self.counts[f"{method} {InternalError.code}"] += 1
            chosen = self.mapped(exc)
            if chosen is None:
                raise
            log.warning("%s failed, answered as mapped", method, exc_info=exc)
            raise (chosen if isinstance(chosen, McpError) else McpError(chosen)) from exc
        if isinstance(outcome, Mapping) and outcome.get("isError"):
            self.counts[f"{method} isError"] += 1
        if not isinstance(outcome, FailedCall):
            return outcome
        chosen = self.mapped(outcome.exception)
        if isinstance(chosen, McpError):
            raise chosen from outcome.exception
        name = str(ctx.request_params.get("name"))
        if chosen is None and not self.mask:
            return outcome
        text = chosen if chosen is not None else masked(name)
        return {"content": [{"type": "text", "text": text}], "isError": True}
