"""The replay guards that outlive a process: one-time request state in SQLite or Redis.

``snodo.core.state.replay`` states the guard's contract and keeps ``MemoryGuard``; these two
keep consumed ids where every worker of a host (``SQLiteGuard``) or of a fleet
(``RedisGuard``) sees them.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Final, Protocol

from snodo.core.state.replay import DEFAULT_TIMEOUT, check_consume
from snodo.stores.redis import RedisClients, RedisError, standard_errors
from snodo.stores.sqlite import open_shared, transaction

__all__ = ["RedisClient", "RedisGuard", "SQLiteGuard"]

DEFAULT_PREFIX: Final = "snodo:state:once:"

_TABLE: Final = "snodo_consumed_state"


class SQLiteGuard:
    """Consumed ids in an SQLite file, shared by the processes of one host."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self._db = open_shared(
            path,
            timeout,
            "SQLiteGuard",
            (
                f"CREATE TABLE IF NOT EXISTS {_TABLE}"
                " (id TEXT PRIMARY KEY, expires_at REAL NOT NULL) WITHOUT ROWID",
                f"CREATE INDEX IF NOT EXISTS {_TABLE}_expiry ON {_TABLE} (expires_at)",
            ),
        )
        self._lock = threading.Lock()  # one connection, used from worker threads in turn

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True the first time ``token_id`` is consumed by any process sharing the file,
        False after; one transaction, run in a worker thread."""
        check_consume(token_id, expires_at)
        # In a worker thread: waiting for another process's lock must not block the loop.
        return await asyncio.to_thread(self._consume, token_id, float(expires_at))

    def _consume(self, token_id: str, expires_at: float) -> bool:
        with self._lock:
            now = self.clock()
            if not expires_at > now:
                return False
            with transaction(self._db) as db:
                db.execute(f"DELETE FROM {_TABLE} WHERE expires_at <= ?", (now,))
                inserted = db.execute(
                    f"INSERT OR IGNORE INTO {_TABLE} (id, expires_at) VALUES (?, ?)",
                    (token_id, expires_at),
                ).rowcount
            return inserted == 1

    def size(self) -> int:
        """Rows held (expired ones until the next consume prunes them)."""
        with self._lock:
            count: int = self._db.execute(f"SELECT count(*) FROM {_TABLE}").fetchone()[0]
            return count

    def close(self) -> None:
        """Close the database connection; the guard is not used after."""
        with self._lock:
            self._db.close()


class RedisClient(Protocol):
    """The one method RedisGuard needs from a client; ``redis.asyncio.Redis`` has it."""

    async def set(self, name: str, value: str, *, px: int, nx: bool) -> Any:
        """``SET name value PX px NX``: None when the key exists already, anything else
        (redis-py: True) when it was set."""
        ...


class RedisGuard:
    """Consumed ids as Redis keys that expire with the token: ``SET key 1 NX PX ms``.

    With a URL it uses the ``redis`` package's asyncio client (``snodo[redis]``): one
    client and a bounded, blocking connection pool per event loop (asyncio connections
    belong to the loop that opened them); ``await aclose()`` on a loop before it ends.
    A failed command raises and is never retried: a SET that reached Redis before the
    failure would make a retry answer False for the first, legitimate use. Failures
    keep the standard shapes: ``TimeoutError``, ``ConnectionError`` (an ``OSError``)
    when Redis cannot be reached, ``RedisError`` when it answers with an error.
    """

    def __init__(
        self,
        target: str | RedisClient,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = DEFAULT_TIMEOUT,
        max_connections: int = 8,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``target``: a ``redis://[[user]:password@]host[:port][/db]`` or ``rediss://`` URL
        (TLS, verified against the system's trust store), or a client object such as
        ``redis.asyncio.Redis``, whose own settings then apply.
        """
        self.prefix = prefix
        self.timeout = timeout
        self.clock = clock
        self._target: RedisClient | RedisClients
        if isinstance(target, str):
            # A bounded, blocking pool per event loop: consume's timeout bounds the wait.
            self._target = RedisClients(
                target, "RedisGuard", timeout=timeout, max_connections=max_connections
            )
        elif callable(getattr(target, "set", None)):
            self._target = target
        else:
            raise TypeError("target must be a redis:// URL or a client with an async set()")

    @property
    def url(self) -> str:
        """The Redis URL it was given; empty when it was given a client object."""
        return self._target.url if isinstance(self._target, RedisClients) else ""

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True when its ``SET NX`` creates the key (the first consume); False after, and
        when already expired."""
        check_consume(token_id, expires_at)
        remaining = expires_at - self.clock()
        if not remaining > 0:
            return False
        key, ms = self.prefix + token_id, math.ceil(remaining * 1000)
        if not isinstance(self._target, RedisClients):
            return await self._target.set(key, "1", px=ms, nx=True) is not None
        with standard_errors():
            async with asyncio.timeout(self.timeout):
                reply = await self._target.client().set(key, "1", px=ms, nx=True)
        if reply not in (True, None):
            raise RedisError(f"unexpected reply to SET NX: {reply!r}")
        return reply is True

    async def aclose(self) -> None:
        """Close this event loop's connections; call it before the loop ends."""
        if isinstance(self._target, RedisClients):
            await self._target.aclose()
