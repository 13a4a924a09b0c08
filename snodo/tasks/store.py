"""Task stores: where task records live, so that any worker can answer for any task.

Theory of operation
-------------------
A store holds ``TaskRecord``s by id and offers three operations, all async:
``create`` (durable before it returns: ext-tasks/tasks.md requires a task to resolve
through tasks/get before its CreateTaskResult is sent), ``get``, and ``update``, an
atomic read-modify-write: the store reads the record, calls ``change`` with it, and
writes what ``change`` returns, with no other writer in between. ``change`` returns
None to leave the record as it is; it may raise, which writes nothing. Every change
of status goes through ``update``, so two workers racing (a cancellation and a
result) serialise, and the status machine in ``advance`` settles who wins.

A record past its TTL is gone: ``get`` and ``update`` answer None, and each backend
deletes it in its own way (memory and SQLite on access and on create, Redis by key
expiry).

Backends, like the replay guards' (``snodo.state.replay``):

* ``MemoryTaskStore``: one process.
* ``SQLiteTaskStore(path)`` (``snodo.tasks.sqlite``): the processes of one host.
* ``RedisTaskStore(url)`` (``snodo.tasks.redis``, the ``snodo[redis]`` extra): many hosts.

``task_store(url)`` builds one from ``memory:``, ``sqlite:///PATH`` or
``redis://HOST:PORT/DB``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

from snodo.tasks.record import Change, TaskRecord

__all__ = ["Change", "MemoryTaskStore", "TaskStore", "task_store"]


class TaskStore(Protocol):
    """Where task records live, shared by every worker of a server."""

    async def create(self, record: TaskRecord) -> None:
        """Store a new record, durably before returning; ValueError if its id is taken."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record ``task_id``, or None when there is no such live task."""
        ...

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        """The record after ``change`` (or as it was, when ``change`` returned None);
        None when there is no such live task."""
        ...

    async def aclose(self) -> None:
        """Release connections (Redis: this event loop's)."""
        ...


class MemoryTaskStore:
    """Records in a dict of this process; the event loop makes each update atomic."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._records: dict[str, TaskRecord] = {}

    async def create(self, record: TaskRecord) -> None:
        """Prune expired records, then add ``record``; ValueError if its id is taken."""
        now = self.clock()
        for task_id in [k for k, r in self._records.items() if r.expired(now)]:
            del self._records[task_id]
        if record.task_id in self._records:
            raise ValueError(f"task {record.task_id} exists")
        self._records[record.task_id] = record

    async def get(self, task_id: str) -> TaskRecord | None:
        """The live record ``task_id``, or None (an expired one is deleted)."""
        record = self._records.get(task_id)
        if record is not None and record.expired(self.clock()):
            del self._records[task_id]
            return None
        return record

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        """Apply ``change`` to the live record with no await in between, so atomically."""
        record = await self.get(task_id)
        if record is None:
            return None
        changed = change(record)  # no await in between: nothing else runs
        if changed is None:
            return record
        self._records[task_id] = changed
        return changed

    async def aclose(self) -> None:
        """Nothing to close; here so that every store has it."""

    def __len__(self) -> int:
        return len(self._records)


def task_store(url: str, *, clock: Callable[[], float] = time.time) -> TaskStore:
    """A store from a URL: ``memory:``, ``sqlite:///PATH`` or ``redis[s]://...``."""
    if url in ("memory:", "memory://"):
        return MemoryTaskStore(clock)
    if url.startswith("sqlite:///"):
        from snodo.tasks.sqlite import SQLiteTaskStore  # noqa: PLC0415 (stdlib, but optional)

        return SQLiteTaskStore(url.removeprefix("sqlite:///"), clock=clock)
    if url.startswith(("redis://", "rediss://")):
        from snodo.tasks.redis import RedisTaskStore  # noqa: PLC0415 (the redis extra)

        return RedisTaskStore(url, clock=clock)
    raise ValueError("a task store URL is memory:, sqlite:///PATH or redis://HOST:PORT/DB")


async def settle(store: TaskStore, task_id: str, change: Change) -> TaskRecord | None:
    """``update`` for callers that must not be cancelled half-way (a result being written)."""
    return await asyncio.shield(store.update(task_id, change))
