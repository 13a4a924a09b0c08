"""Small values kept beyond a request, in named spaces, each entry with its time to live:
in this process's memory, in an SQLite file a host's workers share, or in Redis.

A space (``user:alice``, ``cache:tools``) holds keys. ``put`` may bound how many keys a
space holds (``max_keys``): a new key beyond the bound is refused (``put`` answers
False) while an existing one is replaced, so a space never grows past it. ``clear``
drops a space whole. Values are bytes (callers encode their JSON); each entry expires
``ttl`` seconds after it was last written. ``ctx.user_state`` and each caller's own
visibility (``snodo.server.callers``) and ``ResponseCache`` (``snodo.middleware``) keep
their entries in one of these.

``shared`` says whether another process sees what this one writes: a memory store is
one process's; an SQLite file is its host's; Redis is every host's that reaches it.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Protocol

from snodo.stores.redis import RedisClients, standard_errors
from snodo.stores.sqlite import open_shared

__all__ = ["KeyValueStore", "MemoryStore", "RedisStore", "SQLiteStore", "key_value_store"]

MAX_MEMORY_ENTRIES: Final = 100_000
"""Entries a memory store keeps at most; beyond it the least recently used goes first."""


class KeyValueStore(Protocol):
    """What keeps small values in spaces for features above the core."""

    @property
    def shared(self) -> bool:
        """Whether other processes see what this one writes."""
        ...

    async def get(self, space: str, key: str) -> bytes | None:
        """The value, or None when there is none (or it expired)."""
        ...

    async def put(
        self, space: str, key: str, value: bytes, ttl: float, max_keys: int | None = None
    ) -> bool:
        """Write the value for ``ttl`` seconds; False, writing nothing, when the key is new
        and the space already holds ``max_keys`` keys."""
        ...

    async def delete(self, space: str, key: str) -> None:
        """Forget one key (nothing when there is none)."""
        ...

    async def keys(self, space: str) -> list[str]:
        """The keys the space holds now, in no order."""
        ...

    async def clear(self, space: str) -> None:
        """Forget every key of the space."""
        ...


def _check(ttl: float, max_keys: int | None) -> None:
    if not ttl > 0:
        raise ValueError("ttl must be a positive number of seconds")
    if max_keys is not None and max_keys < 1:
        raise ValueError("max_keys must be at least 1")


class MemoryStore:
    """This process's memory: at most ``max_entries`` entries over every space, the least
    recently used dropped first beyond it; expired entries are dropped as they are met."""

    shared = False

    def __init__(
        self,
        max_entries: int = MAX_MEMORY_ENTRIES,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[tuple[str, str], tuple[bytes, float]] = OrderedDict()
        self._spaces: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get_now(self, space: str, key: str) -> bytes | None:
        """``get`` without a coroutine, for callers on the request path."""
        entry = self._entries.get((space, key))
        if entry is None:
            return None
        if entry[1] <= self.clock():
            self._forget(space, key)
            return None
        self._entries.move_to_end((space, key))
        return entry[0]

    async def get(self, space: str, key: str) -> bytes | None:
        return self.get_now(space, key)

    def put_now(
        self, space: str, key: str, value: bytes, ttl: float, max_keys: int | None = None
    ) -> bool:
        """``put`` without a coroutine."""
        _check(ttl, max_keys)
        now = self.clock()
        keys = self._spaces.setdefault(space, set())
        if max_keys is not None and key not in keys and len(keys) >= max_keys:
            for stale in [k for k in keys if self._entries[(space, k)][1] <= now]:
                self._forget(space, stale)
            keys = self._spaces.setdefault(space, set())
            if len(keys) >= max_keys:
                return False
        keys.add(key)
        self._entries[(space, key)] = (bytes(value), now + ttl)
        self._entries.move_to_end((space, key))
        while len(self._entries) > self.max_entries:
            (old_space, old_key), _ = self._entries.popitem(last=False)
            self._unindex(old_space, old_key)
        return True

    async def put(
        self, space: str, key: str, value: bytes, ttl: float, max_keys: int | None = None
    ) -> bool:
        return self.put_now(space, key, value, ttl, max_keys)

    async def delete(self, space: str, key: str) -> None:
        self._forget(space, key)

    async def keys(self, space: str) -> list[str]:
        now = self.clock()
        found = list(self._spaces.get(space, ()))
        live = [key for key in found if self._entries[(space, key)][1] > now]
        for key in set(found) - set(live):
            self._forget(space, key)
        return live

    def clear_now(self, space: str) -> None:
        """``clear`` without a coroutine."""
        for key in self._spaces.pop(space, ()):
            self._entries.pop((space, key), None)

    async def clear(self, space: str) -> None:
        self.clear_now(space)

    def _forget(self, space: str, key: str) -> None:
        if self._entries.pop((space, key), None) is not None:
            self._unindex(space, key)

    def _unindex(self, space: str, key: str) -> None:
        keys = self._spaces.get(space)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._spaces[space]


_TABLE: Final = "snodo_key_value"
_PURGE_EVERY: Final = 256
"""Writes between two sweeps of every expired row (a read drops what it meets)."""


class SQLiteStore:
    """An SQLite file the processes of one host share (WAL mode, ``snodo.stores.sqlite``);
    each operation is one transaction, run in a worker thread."""

    shared = True

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self._db = open_shared(
            path,
            timeout,
            "SQLiteStore",
            (
                f"CREATE TABLE IF NOT EXISTS {_TABLE} (space TEXT NOT NULL, key TEXT NOT NULL,"
                " value BLOB NOT NULL, expires_at REAL NOT NULL, PRIMARY KEY (space, key))"
                " WITHOUT ROWID",
                f"CREATE INDEX IF NOT EXISTS {_TABLE}_expiry ON {_TABLE} (expires_at)",
            ),
        )
        self._lock = threading.Lock()
        self._writes = 0

    async def get(self, space: str, key: str) -> bytes | None:
        return await asyncio.to_thread(self._get, space, key)

    def _get(self, space: str, key: str) -> bytes | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT value FROM {_TABLE} WHERE space = ? AND key = ? AND expires_at > ?",
                (space, key, self.clock()),
            ).fetchone()
        return None if row is None else bytes(row[0])

    async def put(
        self, space: str, key: str, value: bytes, ttl: float, max_keys: int | None = None
    ) -> bool:
        _check(ttl, max_keys)
        return await asyncio.to_thread(self._put, space, key, bytes(value), ttl, max_keys)

    def _put(self, space: str, key: str, value: bytes, ttl: float, max_keys: int | None) -> bool:
        with self._lock:
            now = self.clock()
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                self._writes += 1
                if self._writes % _PURGE_EVERY == 0:
                    db.execute(f"DELETE FROM {_TABLE} WHERE expires_at <= ?", (now,))
                else:
                    db.execute(
                        f"DELETE FROM {_TABLE} WHERE space = ? AND expires_at <= ?", (space, now)
                    )
                if max_keys is not None:
                    exists = db.execute(
                        f"SELECT 1 FROM {_TABLE} WHERE space = ? AND key = ?", (space, key)
                    ).fetchone()
                    count = db.execute(
                        f"SELECT count(*) FROM {_TABLE} WHERE space = ?", (space,)
                    ).fetchone()[0]
                    if exists is None and count >= max_keys:
                        db.execute("COMMIT")
                        return False
                db.execute(
                    f"INSERT OR REPLACE INTO {_TABLE} (space, key, value, expires_at)"
                    " VALUES (?, ?, ?, ?)",
                    (space, key, value, now + ttl),
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return True

    async def delete(self, space: str, key: str) -> None:
        await asyncio.to_thread(self._execute, "AND key = ?", (space, key))

    async def clear(self, space: str) -> None:
        await asyncio.to_thread(self._execute, "", (space,))

    def _execute(self, condition: str, values: tuple[str, ...]) -> None:
        with self._lock:
            self._db.execute(f"DELETE FROM {_TABLE} WHERE space = ? {condition}", values)

    async def keys(self, space: str) -> list[str]:
        return await asyncio.to_thread(self._keys, space)

    def _keys(self, space: str) -> list[str]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT key FROM {_TABLE} WHERE space = ? AND expires_at > ?",
                (space, self.clock()),
            ).fetchall()
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        """Close the database connection; the store is not used after."""
        with self._lock:
            self._db.close()


_PUT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local most = tonumber(ARGV[3])
if most > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[4])
    and redis.call('ZCARD', KEYS[1]) >= most then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[4])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""
"""One write, its space's index (a sorted set of keys by expiry) kept with it: the
bound is checked against the live keys, on Redis's clock."""

_KEYS: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""

_CLEAR: Final = """
local keys = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, key in ipairs(keys) do redis.call('DEL', ARGV[1] .. key) end
redis.call('DEL', KEYS[1])
return #keys
"""


class RedisStore:
    """Redis (the ``snodo[redis]`` extra): each entry a key that expires with it, and each
    space an index of its keys, so a bound and ``clear`` need no scan. ``prefix`` keeps
    one server's keys apart from another's on the same Redis."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "snodo:kv:",
        timeout: float = 2.0,
        max_connections: int = 8,
    ) -> None:
        self.prefix = prefix
        self.timeout = timeout
        self._clients = RedisClients(
            url, "RedisStore", timeout=timeout, max_connections=max_connections
        )
        self._scripts: dict[tuple[int, str], object] = {}

    @property
    def url(self) -> str:
        return self._clients.url

    def _index(self, space: str) -> str:
        return f"{self.prefix}i:{space}"

    def _entries(self, space: str) -> str:
        """What every entry key of the space begins with (the space's length first, so
        no two spaces' keys can meet)."""
        return f"{self.prefix}e:{len(space)}:{space}:"

    def _script(self, source: str) -> object:
        client = self._clients.client()
        script = self._scripts.get((id(client), source))
        if script is None:
            script = self._scripts[(id(client), source)] = client.register_script(source)
        return script

    async def _run(self, source: str, keys: list[str], args: list[object]) -> object:
        script = self._script(source)
        with standard_errors():
            async with asyncio.timeout(self.timeout):
                return await script(keys=keys, args=args)  # type: ignore[operator]

    async def get(self, space: str, key: str) -> bytes | None:
        with standard_errors():
            async with asyncio.timeout(self.timeout):
                value = await self._clients.client().get(self._entries(space) + key)
        return None if value is None else bytes(value)

    async def put(
        self, space: str, key: str, value: bytes, ttl: float, max_keys: int | None = None
    ) -> bool:
        _check(ttl, max_keys)
        milliseconds = max(1, round(ttl * 1000))
        keys = [self._index(space), self._entries(space) + key]
        done = await self._run(_PUT, keys, [value, milliseconds, max_keys or 0, key])
        return done == 1

    async def delete(self, space: str, key: str) -> None:
        client = self._clients.client()
        with standard_errors():
            async with asyncio.timeout(self.timeout):
                async with client.pipeline(transaction=True) as pipe:
                    pipe.delete(self._entries(space) + key)
                    pipe.zrem(self._index(space), key)
                    await pipe.execute()

    async def keys(self, space: str) -> list[str]:
        found = await self._run(_KEYS, [self._index(space)], [])
        assert isinstance(found, list)
        return [k.decode() if isinstance(k, bytes) else str(k) for k in found]

    async def clear(self, space: str) -> None:
        await self._run(_CLEAR, [self._index(space)], [self._entries(space)])

    async def aclose(self) -> None:
        """Close this event loop's connections; call it before the loop ends."""
        self._scripts.clear()
        await self._clients.aclose()


def key_value_store(target: str | KeyValueStore) -> KeyValueStore:
    """A store from what a setting names: ``memory:``, ``sqlite:PATH``, a
    ``redis[s]://`` URL, or a store object as it is."""
    if not isinstance(target, str):
        return target
    if target in ("memory:", "memory://"):
        return MemoryStore()
    if target.startswith("sqlite:"):
        path = target.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise ValueError("an SQLite store is sqlite:PATH")
        return SQLiteStore(path)
    if target.startswith(("redis://", "rediss://")):
        return RedisStore(target)
    raise ValueError(f"a store is memory:, sqlite:PATH or redis://HOST:PORT/DB, not {target!r}")
