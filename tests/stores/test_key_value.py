"""The key-value stores, each against the same contract: memory, an SQLite file, and a
real redis-server; and the bounds only the memory store has."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from snodo.stores.key_value import (
    KeyValueStore,
    MemoryStore,
    RedisStore,
    SQLiteStore,
    key_value_store,
)

Made = Callable[[], Any]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def opened(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[KeyValueStore]:
    if kind == "memory":
        yield MemoryStore()
    elif kind == "sqlite":
        store = SQLiteStore(tmp_path / "kv.db")
        try:
            yield store
        finally:
            store.close()
    else:
        url = request.getfixturevalue("redis_url")
        redis_store = RedisStore(url, prefix=f"test:{secrets.token_hex(4)}:")
        try:
            yield redis_store
        finally:
            await redis_store.aclose()


def run(kind: str, tmp_path: Path, request: pytest.FixtureRequest, scenario: Any) -> None:
    async def main() -> None:
        async with opened(kind, tmp_path, request) as store:
            await asyncio.wait_for(scenario(store), 30)

    asyncio.run(main())


def test_put_get_replace_and_delete(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def scenario(store: KeyValueStore) -> None:
        assert await store.get("user:a", "k") is None
        assert await store.put("user:a", "k", b"\x00one", 60) is True
        assert await store.put("user:b", "k", b"two", 60) is True
        assert await store.get("user:a", "k") == b"\x00one"
        assert await store.put("user:a", "k", b"again", 60) is True
        assert await store.get("user:a", "k") == b"again"
        assert await store.get("user:b", "k") == b"two"
        await store.delete("user:a", "k")
        await store.delete("user:a", "never")
        assert await store.get("user:a", "k") is None
        assert await store.keys("user:a") == []

    run(kind, tmp_path, request, scenario)


def test_a_space_holds_at_most_max_keys(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def scenario(store: KeyValueStore) -> None:
        for key in ("a", "b", "c"):
            assert await store.put("s", key, b"v", 60, max_keys=3)
        assert await store.put("s", "d", b"v", 60, max_keys=3) is False
        assert await store.put("s", "a", b"new", 60, max_keys=3) is True  # replaced
        assert sorted(await store.keys("s")) == ["a", "b", "c"]
        await store.delete("s", "b")
        assert await store.put("s", "d", b"v", 60, max_keys=3) is True
        assert sorted(await store.keys("s")) == ["a", "c", "d"]

    run(kind, tmp_path, request, scenario)


def test_entries_expire_and_make_room(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def scenario(store: KeyValueStore) -> None:
        assert await store.put("s", "short", b"v", 0.2, max_keys=1)
        assert await store.put("s", "long", b"v", 60, max_keys=1) is False
        await asyncio.sleep(0.4)
        assert await store.get("s", "short") is None
        assert await store.put("s", "long", b"v", 60, max_keys=1) is True
        assert await store.keys("s") == ["long"]

    run(kind, tmp_path, request, scenario)


def test_clear_drops_one_space_whole(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def scenario(store: KeyValueStore) -> None:
        for key in ("a", "b"):
            await store.put("cache:tools", key, b"v", 60)
        await store.put("cache:tool", "a", b"near", 60)  # a name that begins the same
        await store.clear("cache:tools")
        assert await store.keys("cache:tools") == []
        assert await store.get("cache:tools", "a") is None
        assert await store.get("cache:tool", "a") == b"near"

    run(kind, tmp_path, request, scenario)


def test_the_memory_store_drops_the_least_recently_used() -> None:
    store = MemoryStore(max_entries=2)
    store.put_now("s", "a", b"1", 60)
    store.put_now("s", "b", b"2", 60)
    assert store.get_now("s", "a") == b"1"  # a is used again: b goes first
    store.put_now("t", "c", b"3", 60)
    assert (store.get_now("s", "a"), store.get_now("s", "b"), store.get_now("t", "c")) == (
        b"1",
        None,
        b"3",
    )
    assert len(store) == 2


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="ttl"):
        MemoryStore().put_now("s", "k", b"", 0)
    with pytest.raises(ValueError, match="max_keys"):
        MemoryStore().put_now("s", "k", b"", 1, max_keys=0)
    with pytest.raises(ValueError, match="memory:, sqlite:PATH or redis://"):
        key_value_store("postgres://x")
    assert isinstance(key_value_store("memory:"), MemoryStore)


def test_sqlite_is_shared_by_two_openers(tmp_path: Path) -> None:
    async def scenario() -> None:
        first = key_value_store(f"sqlite:{tmp_path / 'shared.db'}")
        second = SQLiteStore(tmp_path / "shared.db")
        assert first.shared and second.shared and not MemoryStore.shared
        await first.put("s", "k", b"v", 60)
        assert await second.get("s", "k") == b"v"
        assert isinstance(first, SQLiteStore)
        first.close()
        second.close()

    asyncio.run(scenario())
