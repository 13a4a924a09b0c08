"""Task records in an SQLite file, shared by the processes of one host.

WAL mode and a busy timeout, as ``snodo.stores.SQLiteGuard``; each update is one
``BEGIN IMMEDIATE`` transaction (read, change, write), so updates from several
processes serialise on the file's write lock. Calls run in a worker thread: waiting
for another process's lock must not block the event loop. Indexes on the expiry time
and on the time a task finished (NULL while it runs) let a create delete what expired
and, at ``max_records``, the task that finished longest ago, without reading records;
the rows are counted (``COUNT(*)``, over the smallest index) on each create.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Final

from snodo.extensions.tasks.record import MAX_RECORDS, Change, StoreFull, TaskRecord
from snodo.stores.sqlite import open_shared, transaction

__all__ = ["SQLiteTaskStore"]

_TABLE: Final = "snodo_tasks"


class SQLiteTaskStore:
    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        max_records: int = MAX_RECORDS,
    ) -> None:
        if max_records <= 0:
            raise ValueError("max_records must be positive")
        self.clock = clock
        self.max_records = max_records
        self._db = open_shared(
            path,
            timeout,
            "SQLiteTaskStore",
            (
                f"CREATE TABLE IF NOT EXISTS {_TABLE} (id TEXT PRIMARY KEY,"
                " record TEXT NOT NULL, expires_at REAL, finished_at REAL) WITHOUT ROWID",
            ),
        )
        # A file from before finished_at: add it (unless it is there, or another process
        # just added it).
        with contextlib.suppress(sqlite3.OperationalError):
            self._db.execute(f"ALTER TABLE {_TABLE} ADD COLUMN finished_at REAL")
        for column in ("expires_at", "finished_at"):
            self._db.execute(
                f"CREATE INDEX IF NOT EXISTS {_TABLE}_{column} ON {_TABLE} ({column})"
                f" WHERE {column} IS NOT NULL"
            )
        self._lock = threading.Lock()

    async def create(self, record: TaskRecord) -> None:
        await asyncio.to_thread(self._create, record)

    async def get(self, task_id: str) -> TaskRecord | None:
        return await asyncio.to_thread(self._update, task_id, None)

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        return await asyncio.to_thread(self._update, task_id, change)

    def _create(self, record: TaskRecord) -> None:
        with self._lock, transaction(self._db):
            self._db.execute(f"DELETE FROM {_TABLE} WHERE expires_at <= ?", (self.clock(),))
            (kept,) = self._db.execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()
            if kept >= self.max_records:
                oldest = self._db.execute(
                    f"SELECT id FROM {_TABLE} WHERE finished_at IS NOT NULL"
                    " ORDER BY finished_at LIMIT 1"
                ).fetchone()
                if oldest is None:
                    raise StoreFull(self.max_records)
                self._db.execute(f"DELETE FROM {_TABLE} WHERE id = ?", oldest)
            try:
                self._db.execute(
                    f"INSERT INTO {_TABLE} (id, record, expires_at, finished_at)"
                    " VALUES (?, ?, ?, ?)",
                    (record.task_id, record.to_json(), record.expires_at(), _finished(record)),
                )
            except sqlite3.IntegrityError as exc:
                raise ValueError(f"task {record.task_id} exists") from exc

    def _update(self, task_id: str, change: Change | None) -> TaskRecord | None:
        with self._lock, transaction(self._db):
            row = self._db.execute(
                f"SELECT record FROM {_TABLE} WHERE id = ?", (task_id,)
            ).fetchone()
            if row is None:
                return None
            record = TaskRecord.from_json(row[0])
            if record.expired(self.clock()):
                self._db.execute(f"DELETE FROM {_TABLE} WHERE id = ?", (task_id,))
                return None
            changed = change(record) if change is not None else None
            if changed is None:
                return record
            self._db.execute(
                f"UPDATE {_TABLE} SET record = ?, expires_at = ?,"
                " finished_at = COALESCE(finished_at, ?) WHERE id = ?",
                (changed.to_json(), changed.expires_at(), _finished(changed), task_id),
            )
            return changed

    async def aclose(self) -> None:
        with self._lock:
            self._db.close()


def _finished(record: TaskRecord) -> float | None:
    """When a terminal record finished (its last update), for eviction; None while live."""
    return record.updated_at if record.terminal else None
