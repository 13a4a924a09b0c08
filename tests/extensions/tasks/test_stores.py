"""The task store contract, the same for every backend: create, get, atomic update,
expiry. Two store objects over one SQLite file or one Redis stand for two workers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from snodo.extensions.tasks import MemoryTaskStore, StoreFull, TaskRecord, TaskStore, task_store
from snodo.extensions.tasks.record import TRANSITIONS, advance

NOW = float(int(time.time()))  # Redis expires keys by real time too


def record(task_id: str = "t1", ttl_ms: int | None = 60_000) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        status="working",
        created_at=NOW,
        updated_at=NOW,
        ttl_ms=ttl_ms,
        poll_interval_ms=500,
        principal=None,
        owner="w",
        lease_until=NOW + 30,
        input_requests={"q": {"method": "roots/list"}},
    )


class Clock:
    now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "redis"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Clock], TaskStore]:
    """Makes stores that share one backing store (memory: the same object)."""
    if request.param == "memory":
        shared: dict[int, MemoryTaskStore] = {}
        return lambda clock: shared.setdefault(0, MemoryTaskStore(clock))
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'tasks.db'}"
    else:
        url = request.getfixturevalue("redis_url").rstrip("/") + "/3"
    prefix = f"{tmp_path.name}:"

    def make(clock: Clock) -> TaskStore:
        store = task_store(url, clock=clock)
        if hasattr(store, "prefix"):
            store.prefix = prefix  # a fresh key space per test
        return store

    return make


def test_create_get_update_and_expiry(stores: Callable[[Clock], TaskStore]) -> None:
    clock = Clock()

    async def scenario() -> None:
        one, two = stores(clock), stores(clock)
        await one.create(record())
        with pytest.raises(ValueError):
            await two.create(record())
        assert await two.get("t1") == record()
        assert await two.get("nope") is None
        kept = await two.update("t1", lambda r: None)
        assert kept == record()
        moved = await two.update("t1", lambda r: advance(r, "input_required", NOW + 1))
        assert moved is not None and (await one.get("t1")) == moved
        clock.now = NOW + 60
        assert await one.get("t1") is None
        assert await two.update("t1", lambda r: r) is None
        await one.aclose()
        await two.aclose()

    asyncio.run(scenario())


def test_updates_from_two_workers_never_lose_a_write(stores: Callable[[Clock], TaskStore]) -> None:
    clock = Clock()

    async def scenario() -> None:
        one, two = stores(clock), stores(clock)
        await one.create(record("race", ttl_ms=None))

        def add(mark: str) -> Callable[[TaskRecord], TaskRecord]:
            return lambda r: replace(r, issued=(*r.issued, mark))

        await asyncio.gather(
            *(store.update("race", add(f"{i}")) for i in range(20) for store in (one, two))
        )
        final = await one.get("race")
        assert final is not None and len(final.issued) == 40
        await one.aclose()
        await two.aclose()

    asyncio.run(scenario())


def test_a_store_keeps_at_most_max_records(stores: Callable[[Clock], TaskStore]) -> None:
    clock = Clock()

    async def finish(store: TaskStore, task_id: str, at: float) -> None:
        await store.update(task_id, lambda r: advance(r, "completed", at, result={}))

    async def scenario() -> None:
        one, two = stores(clock), stores(clock)
        for store in (one, two):
            store.max_records = 3  # type: ignore[attr-defined]
        for i in range(3):
            await one.create(record(f"r{i}", ttl_ms=None))
        with pytest.raises(StoreFull):  # three running: none may go
            await two.create(record("r3"))
        await finish(two, "r1", NOW + 1)
        await finish(one, "r0", NOW + 2)
        await two.create(record("r3"))  # room made by the task that finished first
        assert await one.get("r1") is None
        assert await one.get("r0") is not None
        await one.create(record("r4"))
        assert await two.get("r0") is None
        with pytest.raises(StoreFull):
            await one.create(record("r5"))
        clock.now = NOW + 60  # r3 and r4 expire: their places are free
        await two.create(record("r5"))
        await two.create(record("r6"))
        assert await one.get("r2") is not None  # running, no TTL: kept
        await one.aclose()
        await two.aclose()

    asyncio.run(scenario())


def test_a_memory_store_creates_without_reading_every_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = MemoryTaskStore(Clock(), max_records=5000)

    async def scenario() -> None:
        for i in range(2000):
            await store.create(record(f"r{i}"))
        read: list[str] = []
        expired = TaskRecord.expired

        def counted(self: TaskRecord, now: float) -> bool:
            read.append(self.task_id)
            return expired(self, now)

        monkeypatch.setattr(TaskRecord, "expired", counted)
        await store.create(record("one more"))
        assert len(read) < 20  # not the 2000 a scan would read

    asyncio.run(scenario())


def test_the_status_machine() -> None:
    assert TRANSITIONS["working"] >= {"input_required", "completed", "failed", "cancelled"}
    assert "working" in TRANSITIONS["input_required"]
    finished = advance(record(), "completed", NOW + 1, result={"content": []})
    for status in ("working", "failed", "completed"):
        with pytest.raises(ValueError):
            advance(finished, status, NOW + 2)  # type: ignore[arg-type]
    assert finished.detailed()["result"] == {"content": []}
    assert TaskRecord.from_json(finished.to_json()) == finished


def test_a_bad_store_url() -> None:
    with pytest.raises(ValueError, match="memory:, sqlite"):
        task_store("postgres://x")
