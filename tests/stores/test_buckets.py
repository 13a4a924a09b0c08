"""Token buckets: the arithmetic on a fake clock, and one budget in a real redis-server
shared by two holders."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from snodo.stores.buckets import MemoryBuckets, RedisBuckets, token_buckets


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_a_token_at_the_rate() -> None:
    clock = Clock()
    buckets = MemoryBuckets(clock=clock)
    assert [buckets.take_now("k", 2.0, 3.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take_now("k", 2.0, 3.0) == pytest.approx(0.5)
    clock.now = 0.5
    assert buckets.take_now("k", 2.0, 3.0) == 0.0
    assert buckets.take_now("other", 2.0, 3.0) == 0.0
    clock.now = 100.0  # refilled, to the capacity and no more
    assert [buckets.take_now("k", 2.0, 3.0) for _ in range(4)][-1] == pytest.approx(0.5)


def test_forgotten_keys_start_full() -> None:
    buckets = MemoryBuckets(max_keys=1, clock=Clock())
    assert buckets.take_now("a", 1.0, 1.0) == 0.0
    assert buckets.take_now("b", 1.0, 1.0) == 0.0  # a is forgotten
    assert buckets.take_now("a", 1.0, 1.0) == 0.0


def test_two_holders_share_a_redis_budget(redis_url: str) -> None:
    async def scenario() -> list[float]:
        prefix = f"test:{secrets.token_hex(4)}:"
        first, second = (
            RedisBuckets(redis_url, prefix=prefix),
            RedisBuckets(redis_url, prefix=prefix),
        )
        try:
            waits = []
            for n in range(8):
                holder = first if n % 2 else second
                waits.append(await holder.take("caller", 1 / 600, 5.0))
            return waits
        finally:
            await first.aclose()
            await second.aclose()

    waits = asyncio.run(scenario())
    assert waits[:5] == [0.0] * 5
    assert all(590 < wait <= 600 for wait in waits[5:]), waits


def test_a_store_is_named_or_given() -> None:
    assert isinstance(token_buckets(None), MemoryBuckets)
    given = MemoryBuckets()
    assert token_buckets(given) is given
    with pytest.raises(ValueError, match="memory: or redis://"):
        token_buckets("sqlite:x")
