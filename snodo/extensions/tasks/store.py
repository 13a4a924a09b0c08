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
expiry). Every store keeps at most ``max_records`` records: a create beyond it deletes
the task that finished longest ago (a terminal one), and when none has finished it
raises ``StoreFull``, which the engine answers with an error asking to try later. No
create reads every record: memory keeps an expiry heap and the finished tasks in
order, Redis sorted sets of both; SQLite indexes both, and counts its rows (in C).

Backends, like the replay guards' (``snodo.core.state.replay``):

* ``MemoryTaskStore``: one process.
* ``SQLiteTaskStore(path)`` (``snodo.extensions.tasks.sqlite``): the processes of one host.
* ``RedisTaskStore(url)`` (``snodo.extensions.tasks.redis``, the ``snodo[redis]``
  extra): many hosts.

``task_store(url)`` builds one from ``memory:``, ``sqlite:///PATH`` or
``redis://HOST:PORT/DB``.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Protocol

from snodo.extensions.tasks.record import MAX_RECORDS, Change, StoreFull, TaskRecord

__all__ = ["MAX_RECORDS", "Change", "MemoryTaskStore", "StoreFull", "TaskStore", "task_store"]


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
    """Records in a dict of this process; the event loop makes each update atomic.

    Beside the dict, a heap of expiry times (pruned from its top on each create) and the
    finished tasks' ids in the order they finished (the first is evicted when full)."""

    def __init__(
        self, clock: Callable[[], float] = time.time, *, max_records: int = MAX_RECORDS
    ) -> None:
        if max_records <= 0:
            raise ValueError("max_records must be positive")
        self.clock = clock
        self.max_records = max_records
        self._records: dict[str, TaskRecord] = {}
        self._expiries: list[tuple[float, str]] = []
        self._finished: dict[str, None] = {}

    async def create(self, record: TaskRecord) -> None:
        """Prune expired records, then add ``record``; ValueError if its id is taken,
        ``StoreFull`` when ``max_records`` are kept and none has finished."""
        self._prune(self.clock())
        if record.task_id in self._records:
            raise ValueError(f"task {record.task_id} exists")
        if len(self._records) >= self.max_records:
            if not self._finished:
                raise StoreFull(self.max_records)
            self._forget(next(iter(self._finished)))
        self._records[record.task_id] = record
        self._kept(None, record)
        if len(self._expiries) > 2 * self.max_records:  # evicted ones' entries: rebuild
            self._expiries = []
            for key, kept in self._records.items():
                at = kept.expires_at()
                if at is not None:
                    self._expiries.append((at, key))
            heapq.heapify(self._expiries)

    def _kept(self, before: TaskRecord | None, after: TaskRecord) -> None:
        """Index what changed: a new expiry time, a task that has just finished."""
        at = after.expires_at()
        if at is not None and (before is None or before.expires_at() != at):
            heapq.heappush(self._expiries, (at, after.task_id))
        if after.terminal and (before is None or not before.terminal):
            self._finished[after.task_id] = None

    def _prune(self, now: float) -> None:
        while self._expiries and self._expiries[0][0] <= now:
            _, task_id = heapq.heappop(self._expiries)
            record = self._records.get(task_id)
            if record is not None and record.expired(now):
                self._forget(task_id)

    def _forget(self, task_id: str) -> None:
        self._records.pop(task_id, None)
        self._finished.pop(task_id, None)

    async def get(self, task_id: str) -> TaskRecord | None:
        """The live record ``task_id``, or None (an expired one is deleted)."""
        record = self._records.get(task_id)
        if record is not None and record.expired(self.clock()):
            self._forget(task_id)
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
        self._kept(record, changed)
        return changed

    async def aclose(self) -> None:
        """Nothing to close; here so that every store has it."""

    def __len__(self) -> int:
        return len(self._records)


def task_store(
    url: str, *, clock: Callable[[], float] = time.time, max_records: int = MAX_RECORDS
) -> TaskStore:
    """A store from a URL: ``memory:``, ``sqlite:///PATH`` or ``redis[s]://...``."""
    if url in ("memory:", "memory://"):
        return MemoryTaskStore(clock, max_records=max_records)
    if url.startswith("sqlite:///"):
        from snodo.extensions.tasks.sqlite import SQLiteTaskStore  # noqa: PLC0415 (stdlib, but optional)

        return SQLiteTaskStore(url.removeprefix("sqlite:///"), clock=clock, max_records=max_records)
    if url.startswith(("redis://", "rediss://")):
        from snodo.extensions.tasks.redis import RedisTaskStore  # noqa: PLC0415 (the redis extra)

        return RedisTaskStore(url, clock=clock, max_records=max_records)
    raise ValueError("a task store URL is memory:, sqlite:///PATH or redis://HOST:PORT/DB")
