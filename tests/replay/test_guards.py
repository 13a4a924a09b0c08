"""snodo.core.state.replay: once until expiry, then forgotten; bounded; persistent; fail closed."""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import sqlite3
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from snodo.core.state.replay import MemoryGuard, ReplayGuard
from snodo.stores import RedisError, RedisGuard, SQLiteGuard
from tests.support.processes import free_port

NOW = 1_800_000_000.0
STORES = ["memory", "sqlite", "redis"]


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def new_id() -> str:
    return uuid.uuid4().hex


Scenario = Callable[[ReplayGuard, Clock], Awaitable[None]]


@pytest.fixture(params=STORES)
def run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Scenario], None]:
    """Run a scenario against one store, on a fake clock (Redis: the real one)."""

    def runner(scenario: Scenario) -> None:
        async def main() -> None:
            async with store(request, tmp_path) as (guard, clock):
                await scenario(guard, clock)

        asyncio.run(main())

    return runner


@asynccontextmanager
async def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[ReplayGuard, Clock]]:
    kind = request.param
    if kind == "memory":
        clock = Clock()
        yield MemoryGuard(clock=clock), clock
    elif kind == "sqlite":
        clock = Clock()
        sqlite = SQLiteGuard(tmp_path / "ids.sqlite3", clock=clock)
        try:
            yield sqlite, clock
        finally:
            sqlite.close()
    else:
        # Redis expires keys by its own clock, so the guard must use the real one.
        clock = Clock(time.time())
        redis = RedisGuard(request.getfixturevalue("redis_url"), clock=lambda: clock.now)
        try:
            yield redis, clock
        finally:
            await redis.aclose()


def test_an_id_is_consumed_once(run: Callable[[Scenario], None]) -> None:
    async def scenario(guard: ReplayGuard, clock: Clock) -> None:
        one, two = new_id(), new_id()
        assert await guard.consume(one, clock.now + 60) is True
        assert await guard.consume(one, clock.now + 60) is False
        assert await guard.consume(one, clock.now + 600) is False
        assert await guard.consume(two, clock.now + 60) is True
        assert await guard.consume(one, clock.now + 60) is False

    run(scenario)


def test_concurrent_consumers_of_one_id_have_one_winner(run: Callable[[Scenario], None]) -> None:
    async def scenario(guard: ReplayGuard, clock: Clock) -> None:
        for _ in range(5):
            token_id = new_id()
            results = await asyncio.gather(
                *(guard.consume(token_id, clock.now + 60) for _ in range(8))
            )
            assert sorted(results) == [False] * 7 + [True]

    run(scenario)


def test_an_id_whose_expiry_has_passed_is_refused_and_not_kept(
    run: Callable[[Scenario], None],
) -> None:
    async def scenario(guard: ReplayGuard, clock: Clock) -> None:
        token_id = new_id()
        for past in (clock.now, clock.now - 1, 0):
            assert await guard.consume(token_id, past) is False
        assert await guard.consume(token_id, clock.now + 60) is True

    run(scenario)


@pytest.mark.parametrize("store_kind", ["memory", "sqlite"])
def test_after_expiry_an_id_is_forgotten(store_kind: str, tmp_path: Path) -> None:
    """Decided and documented: the id is pruned, so it may be consumed again.

    The state layer never asks about an expired token, so this never reopens one.
    """

    async def main() -> None:
        clock = Clock()
        guard: MemoryGuard | SQLiteGuard = (
            MemoryGuard(clock=clock)
            if store_kind == "memory"
            else SQLiteGuard(tmp_path / "ids.sqlite3", clock=clock)
        )
        token_id, other = new_id(), new_id()
        assert await guard.consume(token_id, NOW + 10)
        assert await guard.consume(other, NOW + 20)
        clock.now = NOW + 9.999
        assert not await guard.consume(token_id, NOW + 10)
        clock.now = NOW + 10  # expired at exactly expires_at
        assert await guard.consume(token_id, NOW + 30)
        assert not await guard.consume(other, NOW + 20)
        clock.now = NOW + 30
        assert await guard.consume(new_id(), NOW + 40)
        assert guard.size() == 1, "expired ids were pruned"
        if isinstance(guard, SQLiteGuard):
            guard.close()

    asyncio.run(main())


def test_after_expiry_redis_forgets_the_id(redis_url: str) -> None:
    async def main() -> None:
        guard = RedisGuard(redis_url)
        token_id = new_id()
        assert await guard.consume(token_id, time.time() + 0.15)
        assert not await guard.consume(token_id, time.time() + 60)
        await asyncio.sleep(0.25)
        assert await guard.consume(token_id, time.time() + 60)
        await guard.aclose()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("token_id", "expires_at", "error"),
    [
        (b"id", NOW + 1, TypeError),
        (None, NOW + 1, TypeError),
        ("id", True, TypeError),
        ("id", "soon", TypeError),
        ("", NOW + 1, ValueError),
        ("x" * 129, NOW + 1, ValueError),
        ("id", math.nan, ValueError),
        ("id", math.inf, ValueError),
        ("id", -math.inf, ValueError),
    ],
)
def test_bad_arguments_are_caller_errors(
    run: Callable[[Scenario], None], token_id: Any, expires_at: Any, error: type
) -> None:
    async def scenario(guard: ReplayGuard, clock: Clock) -> None:
        with pytest.raises(error):
            await guard.consume(token_id, expires_at)
        assert await guard.consume(new_id().ljust(128, "x"), clock.now + 60)

    run(scenario)


# --- MemoryGuard ---------------------------------------------------------------------------


def test_memory_guard_is_bounded_and_fails_closed_when_full(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        clock = Clock()
        guard = MemoryGuard(max_ids=3, clock=clock)
        assert [await guard.consume(f"id{n}", NOW + 10 + n) for n in range(3)] == [True] * 3
        with caplog.at_level(logging.WARNING, logger="snodo"):
            assert not await guard.consume("id3", NOW + 60)
        assert "full" in caplog.text
        assert not await guard.consume("id0", NOW + 60), "a live id is never evicted"
        clock.now = NOW + 10  # id0 expires: room for one
        assert await guard.consume("id3", NOW + 60)
        assert not await guard.consume("id4", NOW + 60)
        assert guard.size() == 3

    asyncio.run(main())


@pytest.mark.parametrize("max_ids", [0, -1, True, 1.5])
def test_memory_guard_bound_must_be_a_positive_integer(max_ids: Any) -> None:
    with pytest.raises(ValueError):
        MemoryGuard(max_ids=max_ids)


# --- SQLiteGuard ---------------------------------------------------------------------------


def test_sqlite_guard_survives_a_restart_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "ids.sqlite3"

    async def first() -> None:
        guard = SQLiteGuard(path)
        assert await guard.consume("kept", time.time() + 60)
        guard.close()

    async def second() -> None:
        guard = SQLiteGuard(str(path))
        assert not await guard.consume("kept", time.time() + 60)
        assert await guard.consume("new", time.time() + 60)
        guard.close()

    asyncio.run(first())
    asyncio.run(second())
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    db.close()


def test_sqlite_guard_waits_for_another_writer_then_gives_up(tmp_path: Path) -> None:
    path = tmp_path / "ids.sqlite3"
    guard = SQLiteGuard(path, timeout=0.2)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holding the write lock

    async def blocked() -> None:
        started = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await guard.consume("x", time.time() + 60)
        assert time.monotonic() - started >= 0.15

    asyncio.run(blocked())
    other.execute("ROLLBACK")
    other.close()

    async def free() -> None:
        assert await guard.consume("x", time.time() + 60)

    asyncio.run(free())
    guard.close()


def test_sqlite_guard_refuses_a_database_without_wal() -> None:
    with pytest.raises(ValueError, match="WAL"):
        SQLiteGuard(":memory:")


# --- RedisGuard ----------------------------------------------------------------------------


def _redis(url: str, *command: str) -> bytes:
    """One command over a raw socket, for looking behind the guard."""
    host, port = url.removeprefix("redis://").split(":")
    with socket.create_connection((host, int(port)), timeout=2) as sock:
        payload = b"".join(b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in command)
        sock.sendall(b"*%d\r\n" % len(command) + payload)
        return sock.recv(256)


def test_redis_keys_carry_the_prefix_and_expire_with_the_token(redis_url: str) -> None:
    token_id = new_id()

    async def main() -> None:
        guard = RedisGuard(redis_url)
        assert await guard.consume(token_id, time.time() + 30)
        await guard.aclose()

    asyncio.run(main())
    ttl = int(_redis(redis_url, "PTTL", f"snodo:state:once:{token_id}")[1:-2])
    assert 28_000 < ttl <= 30_000


def test_redis_database_and_prefix_separate_guards(redis_url: str) -> None:
    token_id = new_id()

    async def main() -> None:
        guards = [
            RedisGuard(redis_url),
            RedisGuard(redis_url + "/0"),
            RedisGuard(redis_url + "/3"),
            RedisGuard(redis_url, prefix="other:"),
        ]
        results = [await guard.consume(token_id, time.time() + 60) for guard in guards]
        assert results == [True, False, True, True]
        for guard in guards:
            await guard.aclose()

    asyncio.run(main())


def test_redis_many_concurrent_consumes_share_a_bounded_pool(redis_url: str) -> None:
    async def main() -> None:
        guard = RedisGuard(redis_url, max_connections=3)
        ids = [new_id() for _ in range(40)]
        expires = time.time() + 60
        assert all(await asyncio.gather(*(guard.consume(i, expires) for i in ids)))
        assert not any(await asyncio.gather(*(guard.consume(i, expires) for i in ids)))
        await guard.aclose()

    asyncio.run(main())


def test_redis_guard_works_from_one_event_loop_after_another(redis_url: str) -> None:
    guard = RedisGuard(redis_url)
    token_id = new_id()

    async def consume() -> bool:
        try:
            return await guard.consume(token_id, time.time() + 60)
        finally:
            await guard.aclose()

    assert asyncio.run(consume()) is True
    assert asyncio.run(consume()) is False


def test_redis_errors_raise_rather_than_answer(redis_url: str) -> None:
    """A store that cannot answer fails the request; it never says yes by default."""

    async def main() -> None:
        wrong_password = RedisGuard(redis_url.replace("//", "//:nope@"))
        with pytest.raises(RedisError, match="AUTH"):
            await wrong_password.consume(new_id(), time.time() + 60)
        nobody_there = RedisGuard(f"redis://127.0.0.1:{free_port()}")
        with pytest.raises(OSError):
            await nobody_there.consume(new_id(), time.time() + 60)

    asyncio.run(main())


def test_redis_guard_times_out_on_a_server_that_never_answers() -> None:
    async def main() -> None:
        accepted: list[asyncio.StreamWriter] = []

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(writer)  # reads nothing, answers nothing
            await reader.read(1024)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        guard = RedisGuard(f"redis://127.0.0.1:{port}", timeout=0.2)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await guard.consume(new_id(), time.time() + 60)
        assert time.monotonic() - started < 2
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()

    asyncio.run(main())


class FakeClient:
    """What RedisGuard needs of redis.asyncio.Redis: set(name, value, px=, nx=)."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.calls: list[tuple[str, str, int, bool]] = []

    async def set(self, name: str, value: str, *, px: int, nx: bool) -> bool | None:
        self.calls.append((name, value, px, nx))
        if name in self.keys:
            return None
        self.keys.add(name)
        return True


def test_redis_guard_accepts_a_client_object() -> None:
    async def main() -> None:
        client = FakeClient()
        guard = RedisGuard(client, clock=lambda: NOW)
        assert await guard.consume("abc", NOW + 1.0001)
        assert not await guard.consume("abc", NOW + 5)
        assert not await guard.consume("late", NOW)  # never sent: nothing to remember
        assert client.calls == [
            ("snodo:state:once:abc", "1", 1001, True),
            ("snodo:state:once:abc", "1", 5000, True),
        ]

    asyncio.run(main())


@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("http://127.0.0.1", ValueError),
        ("127.0.0.1:6379", ValueError),
        ("redis://user@127.0.0.1", ValueError),
        ("redis://127.0.0.1/db", ValueError),
        (object(), TypeError),
    ],
)
def test_redis_guard_refuses_bad_targets(target: Any, error: type) -> None:
    with pytest.raises(error):
        RedisGuard(target)


def test_a_redis_url_without_the_redis_package_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("redis", "redis.asyncio", "redis.asyncio.retry", "redis.backoff"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"snodo\[redis\]"):
        RedisGuard("redis://127.0.0.1:6379")
    RedisGuard(FakeClient())  # a client object needs no package
