"""``Timing``: how long requests take, by method, and by the item each names.

``stats`` holds, for each method (and ``method item``: ``tools/call forecast``), how
many requests were timed, their total and the longest, in milliseconds, from the first
middleware after this one to the handler's answer (items past ``MAX_KEYS`` are
counted by their method alone: template URIs have no end). Each request is also one
DEBUG line on the ``snodo.timing`` logger.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from snodo.core.context import Context
from snodo.core.types import CallNext
from snodo.middleware.request_log import item_of

__all__ = ["MAX_KEYS", "Timed", "Timing"]

MAX_KEYS = 1000


@dataclass(slots=True)
class Timed:
    """The requests of one method (or method and item) timed so far."""

    count: int = 0
    total_ms: float = 0.0
    longest_ms: float = 0.0

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.count if self.count else 0.0

    def add(self, ms: float) -> None:
        self.count += 1
        self.total_ms += ms
        self.longest_ms = max(self.longest_ms, ms)


class Timing:
    """Time every request; ``stats`` by method and by ``method item``."""

    def __init__(
        self,
        *,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.log = logger or logging.getLogger("snodo.timing")
        self.clock = clock
        self.stats: dict[str, Timed] = {}

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        started = self.clock()
        try:
            return await call_next(ctx)
        finally:
            ms = (self.clock() - started) * 1000
            method = ctx.request_method
            item = item_of(ctx)
            self._add(method, ms)
            if item is not None:
                key = f"{method} {item}"
                if key in self.stats or len(self.stats) < MAX_KEYS:
                    self._add(key, ms)
            if self.log.isEnabledFor(logging.DEBUG):
                self.log.debug("%s%s %.3f ms", method, f" {item}" if item else "", ms)

    def _add(self, key: str, ms: float) -> None:
        timed = self.stats.get(key)
        if timed is None:
            timed = self.stats[key] = Timed()
        timed.add(ms)
