"""``RateLimit``: how often a caller may call, counted in one process or shared by every
worker through Redis.

Each caller has a token bucket (``snodo.stores.buckets``): ``burst`` calls at once, then
``calls`` every ``per`` seconds. A request beyond it is refused before its handler runs
with ``RateLimited``: a JSON-RPC error saying so, with ``retryAfterMs`` in its data (and
over HTTP, 429 and ``Retry-After``). A refused request takes nothing from the budget.

What counts: every request, or with ``tools`` only the calls of those tools. Who is a
caller (``key``): ``"principal"``, the authenticated principal, else the client's
address, else its legacy session (``snodo.server.callers``); ``"address"``, the client's
network address (over HTTP); or a function of the request's ``Context`` returning the
key (None: not counted). With ``store`` (``redis://...``, or ``RedisBuckets``) every
worker that shares it shares each caller's one budget; without it each process counts
its own. When the shared store cannot be reached the request is admitted, and the
outage logged once.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, Literal

from snodo.core.context import Context
from snodo.core.errors import RateLimited
from snodo.core.types import CallNext
from snodo.server.callers import address_of, caller_of
from snodo.stores.buckets import MemoryBuckets, TokenBuckets, token_buckets

__all__ = ["RateLimit"]

log = logging.getLogger("snodo.middleware")

Key = Literal["principal", "address"] | Callable[[Context], str | None]


def _by_principal(ctx: Context) -> str | None:
    if ctx.principal is not None:
        return "p:" + ctx.principal
    address = address_of(ctx)
    if address is not None:
        return "a:" + address
    return caller_of(ctx) or "anonymous"


def _by_address(ctx: Context) -> str | None:
    address = address_of(ctx)
    return "a:" + address if address is not None else (caller_of(ctx) or "anonymous")


class RateLimit:
    """At most ``burst`` requests at once and ``calls`` every ``per`` seconds per caller."""

    def __init__(
        self,
        calls: int,
        per: float = 1.0,
        *,
        burst: int | None = None,
        key: Key = "principal",
        tools: Iterable[str] | None = None,
        store: str | TokenBuckets | None = None,
    ) -> None:
        if calls < 1 or not per > 0:
            raise ValueError("a rate is at least 1 call per a positive number of seconds")
        if burst is not None and burst < 1:
            raise ValueError("burst is at least 1")
        self.rate = calls / per
        """Tokens a caller gains each second."""
        self.capacity = float(burst if burst is not None else calls)
        if key == "principal":
            self._key: Callable[[Context], str | None] = _by_principal
        elif key == "address":
            self._key = _by_address
        elif callable(key):
            self._key = key
        else:
            raise ValueError(f"key is 'principal', 'address' or a function, not {key!r}")
        self.tools = None if tools is None else frozenset(tools)
        self.buckets = token_buckets(store)
        # Limits of other settings sharing a Redis count apart.
        setting = f"{self.rate!r}/{self.capacity!r}/{sorted(self.tools or ())}"
        self._space = hashlib.sha256(setting.encode()).hexdigest()[:12] + ":"
        # In memory, no coroutine per request.
        self._take_now = self.buckets.take_now if isinstance(self.buckets, MemoryBuckets) else None
        self._down = False
        self.refused = 0
        """Requests refused so far by this process."""

    async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
        tools = self.tools
        if tools is not None and not (
            ctx.request_method == "tools/call" and ctx.request_params.get("name") in tools
        ):
            return await call_next(ctx)
        key = self._key(ctx)
        if key is None:
            return await call_next(ctx)
        key = self._space + key
        take_now = self._take_now
        if take_now is not None:
            wait = take_now(key, self.rate, self.capacity)
        else:
            wait = await self._shared(key)
        if wait:
            self.refused += 1
            raise RateLimited(max(1, round(wait * 1000)))
        return await call_next(ctx)

    async def aclose(self) -> None:
        """Close the shared store's connections (the server's ``shutdown`` calls it)."""
        close = getattr(self.buckets, "aclose", None)
        if close is not None:
            await close()

    async def _shared(self, key: str) -> float:
        """The shared bucket's answer; 0 (admitted) while it cannot be reached."""
        try:
            wait = await self.buckets.take(key, self.rate, self.capacity)
        except (OSError, TimeoutError, RuntimeError) as exc:
            if not self._down:
                self._down = True
                log.warning("RateLimit: the shared budget is unreachable, admitting: %r", exc)
            return 0.0
        if self._down:
            self._down = False
            log.info("RateLimit: the shared budget is reachable again")
        return wait
