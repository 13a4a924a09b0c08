"""The shared legacy session store, the relay and the stream event logs, against a real
redis-server (and the in-process log): what each keeps, for how long, and what a
resuming reader gets."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest

from snodo.legacy.events import MemoryEventLog, RedisEventLog, parse_event_id
from snodo.legacy.relay import RedisRelay
from snodo.legacy.store import (
    Created,
    RedisSessionStore,
    SessionRecord,
    StoreUnavailable,
    session_store,
)


def record(session_id: str = "s1", principal: str | None = "alice") -> SessionRecord:
    return SessionRecord(
        session_id, principal, "2025-11-25", {"elicitation": {}}, {"name": "c"}, "info", []
    )


def fresh(redis_url: str) -> RedisSessionStore:
    return RedisSessionStore(redis_url, prefix=f"test:{secrets.token_hex(4)}")


def test_a_record_round_trips_and_changes_are_kept(redis_url: str) -> None:
    async def main() -> None:
        store = fresh(redis_url)
        assert await store.create(record(), ttl=60, max_sessions=10)
        loaded = await store.load("s1", ttl=60)
        assert loaded == record()
        loaded.log_level, loaded.subscriptions = "debug", ["note://a"]
        await store.save(loaded, ttl=60)
        assert await store.load("s1", ttl=60) == loaded
        await store.delete("s1")
        assert await store.load("s1", ttl=60) is None
        await store.close()

    asyncio.run(main())


def test_idle_expiry_and_max_sessions_count_every_worker(redis_url: str) -> None:
    async def main() -> None:
        prefix = f"test:{secrets.token_hex(4)}"
        one, two = (RedisSessionStore(redis_url, prefix=prefix) for _ in range(2))
        assert await one.create(record("a"), ttl=0.3, max_sessions=2)
        assert await two.create(record("b"), ttl=60, max_sessions=2)
        assert not await one.create(record("c"), ttl=60, max_sessions=2), "full, together"
        await asyncio.sleep(0.4)
        assert await two.load("a", ttl=60) is None, "idle past its ttl: gone"
        assert await one.create(record("c"), ttl=60, max_sessions=2), "a place freed"
        assert (await one.load("b", ttl=60)) is not None
        await one.close()
        await two.close()

    asyncio.run(main())


def owned(session_id: str, owner: str) -> SessionRecord:
    made = record(session_id)
    made.owner = owner
    return made


def test_an_owners_sessions_are_counted_across_workers(redis_url: str) -> None:
    """Two workers' stores, one owner: at its cap a new session ends its least recently
    used one (renewed by a load on either worker), and another owner keeps its places."""

    async def main() -> None:
        prefix = f"test:{secrets.token_hex(4)}"
        one, two = (RedisSessionStore(redis_url, prefix=prefix) for _ in range(2))
        made = await one.create(owned("a1", "address:x"), 60, max_sessions=10, per_owner=2)
        assert made == Created(True, None)
        assert await two.create(owned("a2", "address:x"), 60, max_sessions=10, per_owner=2)
        assert await two.load("a1", ttl=60) is not None  # a1 used last: a2 is the oldest
        third = await one.create(owned("a3", "address:x"), 60, max_sessions=10, per_owner=2)
        assert third == Created(True, "a2")
        assert await one.load("a2", ttl=60) is None, "ended for every worker"
        assert (await two.load("a1", ttl=60)).owner == "address:x"  # type: ignore[union-attr]
        other = await two.create(owned("b1", "address:y"), 60, max_sessions=10, per_owner=2)
        assert other == Created(True, None)
        await one.close()
        await two.close()

    asyncio.run(main())


def test_the_bounds_hold_when_workers_create_at_once(redis_url: str) -> None:
    """Forty creates at once from four stores: exactly the bound is kept, and each
    owner never holds more than its cap."""

    async def main() -> None:
        prefix = f"test:{secrets.token_hex(4)}"
        stores = [RedisSessionStore(redis_url, prefix=prefix) for _ in range(4)]
        made = await asyncio.gather(
            *(
                stores[n % 4].create(owned(f"s{n}", f"address:{n % 8}"), 60, 5, per_owner=100)
                for n in range(40)
            )
        )
        assert sum(bool(m) for m in made) == 5
        capped = await asyncio.gather(
            *(
                stores[n % 4].create(owned(f"c{n}", "address:one"), 60, 1000, per_owner=3)
                for n in range(30)
            )
        )
        assert all(capped) and sum(m.ended is not None for m in capped) == 27
        live = [s for n in range(30) if await stores[0].load(s := f"c{n}", ttl=60)]
        assert len(live) == 3
        for store in stores:
            await store.close()

    asyncio.run(main())


def test_a_store_that_does_not_answer_fails_fast() -> None:
    async def main() -> None:
        store = RedisSessionStore("redis://127.0.0.1:1/0", timeout=0.5)
        with pytest.raises(StoreUnavailable):
            await store.load("s1", ttl=60)
        await store.close()

    asyncio.run(asyncio.wait_for(main(), 5))


def test_store_urls() -> None:
    assert session_store("memory:") is None
    assert isinstance(session_store("redis://127.0.0.1:6379/0"), RedisSessionStore)
    with pytest.raises(ValueError, match="memory: or redis://"):
        session_store("sqlite:///x")
    with pytest.raises(ValueError):
        SessionRecord.decode('{"id": "s", "unknown": 1}')


def test_the_relay_carries_answers_to_their_worker_and_announcements_to_all(
    redis_url: str,
) -> None:
    async def main() -> None:
        prefix = f"test:{secrets.token_hex(4)}"
        heard: dict[str, list[Any]] = {"a": [], "b": []}
        relays = {name: RedisRelay(redis_url, prefix=prefix) for name in heard}
        for name, relay in relays.items():
            await relay.start(
                lambda s, r, name=name: heard[name].append(("answer", s, r["id"])),
                lambda s, what, name=name: heard[name].append((what, s)),
            )
        relays["a"].answer(relays["b"].origin, "s1", {"jsonrpc": "2.0", "id": "x.1", "result": {}})
        relays["b"].announce("s1", "ended")
        for _ in range(100):
            if len(heard["a"]) == 1 and len(heard["b"]) == 2:
                break
            await asyncio.sleep(0.02)
        for relay in relays.values():
            await relay.stop()
        assert sorted(heard["b"]) == [("answer", "s1", "x.1"), ("ended", "s1")]
        assert heard["a"] == [("ended", "s1")]

    asyncio.run(main())


def test_event_ids() -> None:
    assert parse_event_id("pAbC_-9.12") == ("pAbC_-9", 12)
    for bad in ("", "p", "p.", ".3", "p.x", "p.-1", "p." + "9" * 10):
        assert parse_event_id(bad) is None, bad


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_a_log_replays_after_an_event_then_follows_to_the_end(kind: str, redis_url: str) -> None:
    async def main() -> None:
        if kind == "memory":
            log: Any = MemoryEventLog(max_events=3)
        else:
            log = RedisEventLog(fresh(redis_url), max_events=3, ttl=60)
        await log.append("s", "p1", 0, {})
        await log.append("s", "p1", 1, {"n": 1})
        await log.append("s", "p1", 2, {"n": 2})
        got: list[Any] = []

        async def read() -> None:
            async for event in log.replay("s", "p1", 1):
                got.append(event)

        reader = asyncio.ensure_future(read())
        await asyncio.sleep(0.05)
        await log.append("s", "p1", 3, {"n": 3})
        await log.end("s", "p1", 4)
        await asyncio.wait_for(reader, 5)
        assert got == [(2, {"n": 2}), (3, {"n": 3}), (4, None)]
        # Three kept: event 1 is gone, so is resuming after event 0.
        with pytest.raises(LookupError):
            async for _ in log.replay("s", "p1", 0):
                pass
        with pytest.raises(LookupError):
            async for _ in log.replay("s", "nothing", 0):
                pass
        backlog = [e async for e in log.replay("s", "p1", 2, follow=False)]
        assert backlog == [(3, {"n": 3}), (4, None)]
        if kind == "redis":
            await log.store.close()

    asyncio.run(main())
