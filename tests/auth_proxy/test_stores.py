"""The proxy's stores, memory, SQLite and Redis, alike: values kept and expired, a take
atomic (one winner however many race, across store instances sharing the data), and
the vault's seal bound to its key and secret."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from snodo.auth.proxy_store import (
    MemoryProxyStore,
    ProxyStore,
    RedisProxyStore,
    SQLiteProxyStore,
    Vault,
)

KINDS = ("memory", "sqlite", "redis")


@pytest.fixture(params=KINDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], ProxyStore]:
    """Makes stores sharing one place (a second instance is a second worker's)."""
    if request.param == "memory":
        shared = MemoryProxyStore()
        return lambda: shared
    if request.param == "sqlite":
        return lambda: SQLiteProxyStore(tmp_path / "proxy.db")
    url = request.getfixturevalue("redis_url")
    prefix = f"test:{request.node.name}:"
    return lambda: RedisProxyStore(url, prefix=prefix)


async def _close(*stores: ProxyStore) -> None:
    for store in stores:
        if isinstance(store, RedisProxyStore):
            await store.aclose()
        elif isinstance(store, SQLiteProxyStore):
            store.close()


def test_put_get_take_delete(stores: Callable[[], ProxyStore]) -> None:
    async def main() -> None:
        store = stores()
        await store.put("a", b"one", 60)
        await store.put("b", b"two", None)
        assert await store.get("a") == b"one"
        assert await store.get("missing") is None
        assert await store.take("a") == b"one"
        assert await store.get("a") is None and await store.take("a") is None
        await store.put("b", b"three", None)  # replaced
        assert await store.get("b") == b"three"
        await store.delete("b")
        assert await store.get("b") is None
        await _close(store)

    asyncio.run(main())


def test_a_take_has_one_winner_across_workers(stores: Callable[[], ProxyStore]) -> None:
    async def main() -> None:
        workers = [stores() for _ in range(4)]
        for round_ in range(5):
            key = f"code-{round_}"
            await workers[0].put(key, b"the code", 60)
            won = await asyncio.gather(*(w.take(key) for w in workers for _ in range(5)))
            assert sorted(won, key=bool) == [None] * 19 + [b"the code"]
        await _close(*workers)

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_values_expire_with_their_ttl(kind: str, tmp_path: Path) -> None:
    now = [1000.0]
    store: ProxyStore = (
        MemoryProxyStore(clock=lambda: now[0])
        if kind == "memory"
        else SQLiteProxyStore(tmp_path / "ttl.db", clock=lambda: now[0])
    )

    async def main() -> None:
        await store.put("short", b"x", 10)
        await store.put("kept", b"y", None)
        now[0] += 9.9
        assert await store.get("short") == b"x"
        now[0] += 0.2
        assert await store.get("short") is None and await store.take("short") is None
        assert await store.get("kept") == b"y"
        await _close(store)

    asyncio.run(main())


def test_redis_values_carry_their_ttl(redis_url: str) -> None:
    async def main() -> None:
        store = RedisProxyStore(redis_url, prefix="test:ttl:")
        await store.put("k", b"v", 30)
        await store.put("forever", b"v", None)
        client = store._client()
        assert 0 < await client.pttl("test:ttl:k") <= 30_000
        assert await client.pttl("test:ttl:forever") == -1
        await _close(store)

    asyncio.run(main())


def test_the_vault_opens_only_its_own_seals_under_their_key() -> None:
    vault = Vault(b"s" * 32)
    sealed = vault.seal("code:abc", {"upstream": {"access_token": "provider-token"}})
    assert b"provider-token" not in sealed
    assert vault.open("code:abc", sealed) == {"upstream": {"access_token": "provider-token"}}
    assert vault.open("code:other", sealed) is None  # moved to another key
    assert Vault(b"t" * 32).open("code:abc", sealed) is None  # another secret
    flipped = sealed[:-1] + bytes([sealed[-1] ^ 1])
    assert vault.open("code:abc", flipped) is None
    assert vault.open("code:abc", None) is None


def test_the_memory_store_forgets_what_expired_as_it_goes() -> None:
    now = [0.0]
    store = MemoryProxyStore(clock=lambda: now[0])

    async def main() -> None:
        for n in range(1000):
            await store.put(f"sign-in:{n}", b"x", 10)
            now[0] += 1
        assert len(store._values) <= 10 + 256  # the live ones, and at most one sweep behind

    asyncio.run(main())


def test_a_count_is_atomic_across_workers(stores: Callable[[], ProxyStore]) -> None:
    async def main() -> None:
        workers = [stores() for _ in range(4)]
        totals = await asyncio.gather(*(w.count("window", 60) for w in workers for _ in range(5)))
        assert sorted(totals) == list(range(1, 21))  # each worker's step seen by the next
        assert await workers[1].count("another", 60) == 1
        await _close(*workers)

    asyncio.run(main())


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_count_starts_again_when_its_window_ends(kind: str, tmp_path: Path) -> None:
    now = [1000.0]
    store: ProxyStore = (
        MemoryProxyStore(clock=lambda: now[0])
        if kind == "memory"
        else SQLiteProxyStore(tmp_path / "count.db", clock=lambda: now[0])
    )

    async def main() -> None:
        assert [await store.count("w", 10) for _ in range(3)] == [1, 2, 3]
        now[0] += 9.9  # counting does not push the window's end
        assert await store.count("w", 10) == 4
        now[0] += 0.2
        assert await store.count("w", 10) == 1
        now[0] += 9.9
        assert await store.count("w", 10) == 2
        await _close(store)

    asyncio.run(main())
