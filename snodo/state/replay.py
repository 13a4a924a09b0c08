"""Replay guards: at-most-once consumption of one-time request state.

Theory of operation
-------------------
A sealed token proves the server made it for this request and principal, but a copy
opens as well as the original until it expires. basic/patterns/mrtr.mdx: "servers
needing at-most-once consumption MUST enforce that server-side". A token sealed with
``once=True`` carries a random 128-bit id; ``snodo.state.open_once`` verifies the token
and then calls ``guard.consume(id, expires_at)``, which answers True for the first
call with an id and False for every later one, until ``expires_at``.

* ``expires_at`` is Unix seconds by the guard's clock. After it the id is forgotten
  (pruned), and a new consume of it answers True again. That is safe because the
  state layer never asks about a token past its expiry: it refuses expired tokens
  first and asks the guard to hold ids until ``exp + CLOCK_SKEW``, so even a node
  whose clock lags by the tolerated skew finds the id still held.
* An id whose ``expires_at`` has already passed by the guard's clock answers False:
  the guard could not remember it, so it cannot promise "once". This fails closed when
  the guard's clock runs ahead of the nodes' (keep them in sync, within the skew).
* A store that fails (Redis down, SQLite locked past its timeout) raises. The request
  then fails as an internal error instead of skipping the check.

The protocol is async. The server core is async, and the distributed store is a
network round trip that must not block the event loop serving other requests. A sync
protocol would force a blocking socket or a nested loop on Redis; an async one costs
the in-memory store nothing and lets SQLite wait for its lock in a worker thread.

Stores:

* ``MemoryGuard``: one process (every worker of a multi-process server has its own, so
  use it only with one). Bounded: past ``max_ids`` live ids it answers False (fails
  closed) rather than forget an id that is still live; expired ids are pruned on
  every call from a heap ordered by expiry.
* ``SQLiteGuard(path)``: stdlib sqlite3. Survives restarts, and several processes on
  one host can share the file: WAL mode, a busy timeout, and each consume is one
  ``BEGIN IMMEDIATE`` transaction that prunes expired rows and inserts the id into a
  PRIMARY KEY column, so exactly one inserter wins. ``synchronous=FULL``: a consumed
  id must survive a power cut, or the token could be replayed after it.
* ``RedisGuard(url or client)``: the distributed store, one ``SET key 1 NX PX ms`` per
  consume (atomic on the server; exactly one SET NX of a key succeeds). With a URL it
  uses the ``redis`` package's asyncio client (the ``snodo[redis]`` extra), which gets
  TLS, ACL auth and connection pooling right. Pass a ``redis.asyncio.Redis`` (or
  anything with the same ``set``) instead to reuse a configured client, Sentinel and
  Cluster included. PX is relative and computed with the guard's clock, so the Redis
  host's clock does not matter.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from snodo.state.shared_sqlite import open_shared

__all__ = ["MemoryGuard", "RedisClient", "RedisError", "RedisGuard", "ReplayGuard", "SQLiteGuard"]

log = logging.getLogger("snodo")

MAX_ID_LENGTH: Final = 128
"""Characters; state's ids are 22. Bounds what a caller can make a store keep."""
DEFAULT_MAX_IDS: Final = 100_000
"""Live ids a MemoryGuard holds: about 270 one-time retries a second, each id held for the
default 300 s lifetime plus the 60 s clock skew."""
DEFAULT_PREFIX: Final = "snodo:state:once:"
DEFAULT_TIMEOUT: Final = 5.0
"""Seconds to wait for a lock (SQLite) or a connect plus reply (Redis) before failing."""


class ReplayGuard(Protocol):
    """Remembers consumed ids until they expire."""

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True the first time ``token_id`` is consumed, False until ``expires_at`` passes.

        ``expires_at`` is Unix seconds. False also when it has already passed.
        """
        ...


def _check(token_id: object, expires_at: object) -> None:
    """Caller bugs, not peer input: the state layer only passes well-formed values."""
    if not isinstance(token_id, str) or isinstance(expires_at, bool):
        raise TypeError("consume(token_id: str, expires_at: float)")
    if not isinstance(expires_at, int | float):
        raise TypeError("expires_at must be Unix seconds")
    if not math.isfinite(expires_at):
        raise ValueError("expires_at must be finite")
    if not 0 < len(token_id) <= MAX_ID_LENGTH:
        raise ValueError(f"token_id must be 1 to {MAX_ID_LENGTH} characters")


class MemoryGuard:
    """Consumed ids in a dict, with a heap for pruning; one process only."""

    def __init__(
        self, *, max_ids: int = DEFAULT_MAX_IDS, clock: Callable[[], float] = time.time
    ) -> None:
        if isinstance(max_ids, bool) or not isinstance(max_ids, int) or max_ids < 1:
            raise ValueError("max_ids must be a positive integer")
        self.max_ids = max_ids
        self.clock = clock
        self._expiry: dict[str, float] = {}
        self._heap: list[tuple[float, str]] = []
        # consume never awaits, so one event loop cannot interleave it; the lock is for
        # servers that share one guard between threads (each with its own loop).
        self._lock = threading.Lock()

    def size(self) -> int:
        """Ids held (expired ones until the next consume prunes them)."""
        return len(self._expiry)

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True the first time ``token_id`` is consumed; False after, when already
        expired, or when ``max_ids`` live ids are held."""
        _check(token_id, expires_at)
        with self._lock:
            now = self.clock()
            if not expires_at > now:
                return False
            while self._heap and self._heap[0][0] <= now:
                expired, old = heapq.heappop(self._heap)
                if self._expiry.get(old) == expired:
                    del self._expiry[old]
            if token_id in self._expiry:
                return False
            if len(self._expiry) >= self.max_ids:
                log.warning("MemoryGuard full (%d live ids): refusing one-time state", self.max_ids)
                return False
            self._expiry[token_id] = expires_at
            heapq.heappush(self._heap, (expires_at, token_id))
            return True


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
        _check(token_id, expires_at)
        # In a worker thread: waiting for another process's lock must not block the loop.
        return await asyncio.to_thread(self._consume, token_id, float(expires_at))

    def _consume(self, token_id: str, expires_at: float) -> bool:
        with self._lock:
            now = self.clock()
            if not expires_at > now:
                return False
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(f"DELETE FROM {_TABLE} WHERE expires_at <= ?", (now,))
                inserted = db.execute(
                    f"INSERT OR IGNORE INTO {_TABLE} (id, expires_at) VALUES (?, ?)",
                    (token_id, expires_at),
                ).rowcount
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
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


class RedisError(RuntimeError):
    """Redis answered with an error (a refused AUTH, a wrong database, ...)."""


def _redis() -> Any:
    """The ``redis`` package (the ``snodo[redis]`` extra), imported when a URL needs it."""
    try:
        # Optional (only URL targets need it), so imported on first use.
        import redis.asyncio  # noqa: PLC0415
        import redis.asyncio.retry  # noqa: PLC0415
        import redis.backoff  # noqa: PLC0415
        import redis.exceptions  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(
            "RedisGuard with a URL needs the redis package: pip install 'snodo[redis]'"
        ) from exc
    return redis


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
        self._max_connections = max_connections
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]
        self._clients = weakref.WeakKeyDictionary()
        self._client: RedisClient | None = None
        self._url = ""
        if not isinstance(target, str):
            if not callable(getattr(target, "set", None)):
                raise TypeError("target must be a redis:// URL or a client with an async set()")
            self._client = target
            return
        url = urlsplit(target)
        if url.scheme not in ("redis", "rediss"):
            raise ValueError("RedisGuard URL must start with redis:// or rediss://")
        if url.username and not url.password:
            raise ValueError("a Redis URL with a user needs a password: redis://user:pw@host")
        path = url.path.strip("/")
        if path and not path.isdigit():
            raise ValueError("the path of a Redis URL is the database number")
        _redis()  # ImportError naming the extra now, not on the first request
        self._url = target

    @property
    def url(self) -> str:
        """The Redis URL it was given; empty when it was given a client object."""
        return self._url

    async def consume(self, token_id: str, expires_at: float) -> bool:
        """True when its ``SET NX`` creates the key (the first consume); False after, and
        when already expired."""
        _check(token_id, expires_at)
        remaining = expires_at - self.clock()
        if not remaining > 0:
            return False
        key, ms = self.prefix + token_id, math.ceil(remaining * 1000)
        if self._client is not None:
            return await self._client.set(key, "1", px=ms, nx=True) is not None
        redis = _redis()
        try:
            async with asyncio.timeout(self.timeout):
                reply = await self._loop_client().set(key, "1", px=ms, nx=True)
        except redis.exceptions.AuthenticationError as exc:  # a ConnectionError to redis-py
            raise RedisError(str(exc)) from exc
        except redis.exceptions.TimeoutError as exc:
            raise TimeoutError(str(exc)) from exc
        except redis.exceptions.ConnectionError as exc:
            raise ConnectionError(str(exc)) from exc
        except redis.exceptions.RedisError as exc:
            raise RedisError(str(exc)) from exc
        if reply not in (True, None):
            raise RedisError(f"unexpected reply to SET NX: {reply!r}")
        return reply is True

    def _loop_client(self) -> Any:
        """This event loop's client, made on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            redis = _redis()
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                self._url,
                max_connections=self._max_connections,
                timeout=None,  # wait for a free connection; consume's timeout bounds it
                socket_connect_timeout=self.timeout,
                retry=redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0),
                # RESP2: plain AUTH, which a server without that password refuses (HELLO
                # AUTH would pass on a default user that takes any password).
                protocol=2,
            )
            client = self._clients[loop] = redis.asyncio.Redis(connection_pool=pool)
        return client

    async def aclose(self) -> None:
        """Close this event loop's connections; call it before the loop ends."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
            await client.connection_pool.disconnect()
