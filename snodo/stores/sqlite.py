"""One SQLite file shared by the worker processes of a machine, opened one way.

Every store that keeps its state in SQLite (the replay guard, the task store, the OAuth
proxy's records) opens its file with ``open_shared`` and writes with ``transaction``, so
they all wait for another process's lock the same bounded time and survive a crash
the same way.
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["open_shared", "transaction"]


def open_shared(
    path: str | os.PathLike[str], timeout: float, owner: str, schema: Sequence[str]
) -> sqlite3.Connection:
    """A WAL-mode, fully synchronous connection with ``schema`` applied.

    Autocommit (isolation_level=None), so a transaction is exactly the caller's BEGIN
    IMMEDIATE (``transaction``): it takes the write lock up front, where the busy timeout
    applies, instead of upgrading a read lock, which can fail at once with BUSY. A file
    that refuses WAL (e.g. on a network file system) is a ValueError naming ``owner``.
    The connection may be used from any thread, one at a time: callers hold a lock.
    """
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        db.execute(f"PRAGMA busy_timeout = {math.ceil(timeout * 1000)}")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise ValueError(f"{owner} needs WAL mode; {path!s} allows {mode!r}")
        db.execute("PRAGMA synchronous = FULL")  # what was written must survive a crash
        for statement in schema:
            db.execute(statement)
    except BaseException:
        db.close()
        raise
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` when the body raised."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
