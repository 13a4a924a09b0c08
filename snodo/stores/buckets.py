"""Token buckets: how much of a rate each key has left, in memory or shared through Redis.

A bucket holds at most ``capacity`` tokens and gains ``rate`` tokens a second; each
admitted request takes one. ``take`` answers 0 when it took a token, else the seconds
until one will be there (nothing is taken then: a refused request costs no budget).
``MemoryBuckets`` counts in this process. ``RedisBuckets`` keeps every bucket in Redis
and updates it in one script, on Redis's own clock, so the workers that share it share
one budget per key, wherever they run.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Protocol

from snodo.stores.redis import RedisClients, standard_errors

__all__ = ["MemoryBuckets", "RedisBuckets", "TokenBuckets", "token_buckets"]

MAX_MEMORY_BUCKETS: Final = 100_000
"""Keys a memory store tracks at once; the one unused longest goes first (a full bucket,
or nearly: forgetting it costs at most a burst)."""


class TokenBuckets(Protocol):
    async def take(self, key: str, rate: float, capacity: float) -> float:
        """Take one token from ``key``'s bucket: 0.0 when taken, else the seconds until
        one is there."""
        ...


class MemoryBuckets:
    """Buckets of this process; ``take_now`` is ``take`` without a coroutine."""

    def __init__(
        self,
        max_keys: int = MAX_MEMORY_BUCKETS,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()

    def take_now(self, key: str, rate: float, capacity: float) -> float:
        now = self.clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = [capacity, now]
            if len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            bucket[0] = min(capacity, bucket[0] + (now - bucket[1]) * rate)
            bucket[1] = now
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return 0.0
        return (1.0 - bucket[0]) / rate

    async def take(self, key: str, rate: float, capacity: float) -> float:
        return self.take_now(key, rate, capacity)


_TAKE: Final = """
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1])
local at = tonumber(held[2])
if tokens == nil or at == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
end
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate) + 1000)
return tostring(wait)
"""
"""One bucket read, refilled, taken from and written back in one step; ``rate`` in
tokens per millisecond. A bucket left alone until it is full again is let expire."""


class RedisBuckets:
    """Buckets in Redis (the ``snodo[redis]`` extra), every worker's one budget per key.
    ``prefix`` keeps one server's buckets apart from another's."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "snodo:rate:",
        timeout: float = 1.0,
        max_connections: int = 8,
    ) -> None:
        self.prefix = prefix
        self.timeout = timeout
        self._clients = RedisClients(
            url, "RedisBuckets", timeout=timeout, max_connections=max_connections
        )
        self._scripts: dict[int, object] = {}

    @property
    def url(self) -> str:
        return self._clients.url

    async def take(self, key: str, rate: float, capacity: float) -> float:
        client = self._clients.client()
        script = self._scripts.get(id(client))
        if script is None:
            script = self._scripts[id(client)] = client.register_script(_TAKE)
        with standard_errors():
            async with asyncio.timeout(self.timeout):
                wait = await script(  # type: ignore[operator]
                    keys=[self.prefix + key], args=[rate / 1000.0, capacity]
                )
        milliseconds = float(wait)
        return 0.0 if milliseconds <= 0 else math.ceil(milliseconds) / 1000.0

    async def aclose(self) -> None:
        """Close this event loop's connections; call it before the loop ends."""
        self._scripts.clear()
        await self._clients.aclose()


def token_buckets(target: str | TokenBuckets | None) -> TokenBuckets:
    """Buckets from what a setting names: None or ``memory:`` (this process), a
    ``redis[s]://`` URL, or a buckets object as it is."""
    if target is None or target in ("memory:", "memory://"):
        return MemoryBuckets()
    if isinstance(target, str):
        if target.startswith(("redis://", "rediss://")):
            return RedisBuckets(target)
        raise ValueError(f"a rate limit's store is memory: or redis://HOST:PORT/DB, not {target!r}")
    return target
