"""Where the authorization-server proxy keeps its records: memory, SQLite or Redis.

Theory of operation. The proxy (``snodo.auth.proxy``) keeps short records under string
keys: registered clients, authorizations waiting for the provider, codes, refresh
tokens, token families and the provider's tokens. Every worker of a server must see
the same records (a code minted on one is redeemed on another), so the store is
shared like the other stores of snodo: one process (memory), the processes of a host
(an SQLite file in WAL mode) or many hosts (Redis).

A store holds bytes only; what the proxy writes is sealed first (``Vault``: AES-GCM
under a key derived from the server's secret, the record's key as associated data), so
the provider's tokens are encrypted at rest and a record cannot be moved to another
key. Keys of codes and tokens are their SHA-256 (``digest``), so the store never holds
a credential in the clear either. ``take`` reads and deletes in one atomic step: a code
or a refresh token is used once even when two workers race for it. ``count`` is an
atomic counter living for a window, what the proxy's bounds (``snodo.auth.proxy_limits``)
count with across workers.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

try:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_store needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.stores.redis import RedisClients
from snodo.stores.sqlite import open_shared

__all__ = [
    "DefaultStore",
    "MemoryProxyStore",
    "ProxyStore",
    "RedisProxyStore",
    "SQLiteProxyStore",
    "Vault",
    "derive",
    "digest",
]


class ProxyStore(Protocol):
    """Bytes under string keys, each with an optional time to live in seconds."""

    async def put(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store ``value`` under ``key``, replacing any, for ``ttl`` seconds (None: kept)."""
        ...

    async def get(self, key: str) -> bytes | None:
        """The live value under ``key``, or None."""
        ...

    async def take(self, key: str) -> bytes | None:
        """The live value under ``key``, deleted in the same atomic step; None if absent,
        and then for every caller but one when several race."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        ...

    async def count(self, key: str, ttl: float) -> int:
        """Add one to the counter under ``key`` and return it, in one atomic step; a
        counter absent or expired starts at one and lives ``ttl`` seconds."""
        ...


def derive(secret: bytes, purpose: str) -> bytes:
    """A 32-byte key for one purpose, so the JWT key, the cookie key and the vault key
    all come from the one secret the workers share and none reveals another."""
    return hmac.new(secret, b"snodo.auth.proxy:" + purpose.encode(), hashlib.sha256).digest()


def digest(value: str) -> str:
    """What a credential is stored under: its SHA-256, never the credential itself."""
    return base64.urlsafe_b64encode(hashlib.sha256(value.encode()).digest()).decode().rstrip("=")


class Vault:
    """Seals records (JSON) with AES-256-GCM, bound to the key they are stored under."""

    def __init__(self, secret: bytes) -> None:
        self._aead = AESGCM(derive(secret, "vault"))

    def seal(self, key: str, record: dict[str, Any]) -> bytes:
        nonce = os.urandom(12)
        data = json.dumps(record, separators=(",", ":")).encode()
        return nonce + self._aead.encrypt(nonce, data, key.encode())

    def open(self, key: str, sealed: bytes | None) -> dict[str, Any] | None:
        """The record, or None when absent or not sealed by this secret for this key."""
        if sealed is None or len(sealed) < 13:
            return None
        try:
            data = self._aead.decrypt(sealed[:12], sealed[12:], key.encode())
        except InvalidTag:
            return None
        record = json.loads(data)
        return record if isinstance(record, dict) else None


class DefaultStore:
    """The store of a proxy given none: this process's memory (or Redis's at
    ``SNODO_REDIS``) until the server the proxy protects is given a Redis URL
    (``Server(redis=URL)``), which replaces it before anything is kept. The proxy is
    built before that server, so the store it holds is this one, not the one inside."""

    def __init__(self, inner: ProxyStore) -> None:
        self.inner = inner

    def use(self, store: ProxyStore) -> None:
        """Keep everything from now on in ``store``."""
        self.inner = store

    async def put(self, key: str, value: bytes, ttl: float | None) -> None:
        await self.inner.put(key, value, ttl)

    async def get(self, key: str) -> bytes | None:
        return await self.inner.get(key)

    async def take(self, key: str) -> bytes | None:
        return await self.inner.take(key)

    async def delete(self, key: str) -> None:
        await self.inner.delete(key)

    async def count(self, key: str, ttl: float) -> int:
        return await self.inner.count(key, ttl)


class MemoryProxyStore:
    """Records of this process alone: one worker, or tests."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._values: dict[str, tuple[bytes, float]] = {}
        self._puts = 0

    def _live(self, key: str) -> bytes | None:
        found = self._values.get(key)
        if found is None:
            return None
        if found[1] <= self.clock():
            del self._values[key]
            return None
        return found[0]

    def _sweep(self) -> None:
        now = self.clock()
        for key in [k for k, (_, until) in self._values.items() if until <= now]:
            del self._values[key]

    async def put(self, key: str, value: bytes, ttl: float | None) -> None:
        self._puts += 1
        if self._puts % 256 == 0:
            self._sweep()  # bounded by what is live, not by what ever was
        self._values[key] = (value, math.inf if ttl is None else self.clock() + ttl)

    async def get(self, key: str) -> bytes | None:
        return self._live(key)

    async def take(self, key: str) -> bytes | None:
        value = self._live(key)  # no await between the read and the delete: atomic
        self._values.pop(key, None)
        return value

    async def delete(self, key: str) -> None:
        self._values.pop(key, None)

    async def count(self, key: str, ttl: float) -> int:
        value = self._live(key)  # no await from here on: atomic
        if value is None:
            self._values[key] = (b"1", self.clock() + ttl)
            return 1
        total = int(value) + 1
        self._values[key] = (str(total).encode(), self._values[key][1])
        return total


_TABLE = "snodo_auth_proxy"


class SQLiteProxyStore:
    """Records in an SQLite file shared by the workers of one host (WAL mode); a take
    is one ``DELETE ... RETURNING`` statement, atomic across processes."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        db = open_shared(
            path,
            timeout,
            "SQLiteProxyStore",
            (
                f"CREATE TABLE IF NOT EXISTS {_TABLE} (key TEXT PRIMARY KEY,"
                " value BLOB NOT NULL, expires_at REAL) WITHOUT ROWID",
            ),
        )
        self._db = db
        self._lock = threading.Lock()
        """One statement at a time on the shared connection (calls run in threads)."""

    def close(self) -> None:
        self._db.close()

    def _run(self, sql: str, args: tuple[Any, ...]) -> bytes | None:
        with self._lock:
            row = self._db.execute(sql, args).fetchone()
        return None if row is None else bytes(row[0])

    async def put(self, key: str, value: bytes, ttl: float | None) -> None:
        until = None if ttl is None else self.clock() + ttl
        await asyncio.to_thread(
            self._run,
            f"INSERT OR REPLACE INTO {_TABLE} (key, value, expires_at) VALUES (?, ?, ?)",
            (key, value, until),
        )
        if int.from_bytes(os.urandom(1)) == 0:  # now and then, drop what expired
            await asyncio.to_thread(
                self._run, f"DELETE FROM {_TABLE} WHERE expires_at <= ?", (self.clock(),)
            )

    async def get(self, key: str) -> bytes | None:
        return await asyncio.to_thread(
            self._run,
            f"SELECT value FROM {_TABLE} WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",
            (key, self.clock()),
        )

    async def take(self, key: str) -> bytes | None:
        return await asyncio.to_thread(
            self._run,
            f"DELETE FROM {_TABLE} WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)"
            " RETURNING value",
            (key, self.clock()),
        )

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._run, f"DELETE FROM {_TABLE} WHERE key = ?", (key,))

    def _count(self, key: str, ttl: float) -> int:
        now = self.clock()
        # One statement: the row's old values on the right of SET, so an expired
        # counter starts again at one with a new expiry.
        sql = (
            f"INSERT INTO {_TABLE} (key, value, expires_at) VALUES (?, CAST('1' AS BLOB), ?)"
            " ON CONFLICT (key) DO UPDATE SET"
            " value = CASE WHEN expires_at <= ? THEN CAST('1' AS BLOB)"
            " ELSE CAST(CAST(CAST(value AS TEXT) AS INTEGER) + 1 AS TEXT) END,"
            " expires_at = CASE WHEN expires_at <= ? THEN excluded.expires_at"
            " ELSE expires_at END RETURNING value"
        )
        with self._lock:
            row = self._db.execute(sql, (key, now + ttl, now, now)).fetchone()
        value = row[0]
        return int(value.decode() if isinstance(value, bytes) else value)

    async def count(self, key: str, ttl: float) -> int:
        return await asyncio.to_thread(self._count, key, ttl)


class RedisProxyStore:
    """Records in Redis, shared by workers on many hosts (the ``snodo[redis]`` extra):
    one string key each, expiring with PX; a take is GETDEL (Redis 6.2 or later),
    atomic in Redis."""

    def __init__(self, url: str, *, prefix: str = "snodo:auth:", timeout: float = 5.0) -> None:
        self._connections = RedisClients(
            url, "RedisProxyStore", timeout=timeout, command_timeout=timeout
        )
        self.url = url
        self.prefix = prefix
        self.timeout = timeout

    def _client(self) -> Any:
        """This event loop's client."""
        return self._connections.client()

    async def aclose(self) -> None:
        await self._connections.aclose()

    async def put(self, key: str, value: bytes, ttl: float | None) -> None:
        px = None if ttl is None else max(1, math.ceil(ttl * 1000))
        await self._client().set(self.prefix + key, value, px=px)

    async def get(self, key: str) -> bytes | None:
        value = await self._client().get(self.prefix + key)
        return None if value is None else bytes(value)

    async def take(self, key: str) -> bytes | None:
        value = await self._client().getdel(self.prefix + key)
        return None if value is None else bytes(value)

    async def delete(self, key: str) -> None:
        await self._client().delete(self.prefix + key)

    async def count(self, key: str, ttl: float) -> int:
        # SET NX creates it with its expiry, INCR keeps that expiry; MULTI makes the
        # pair one step.
        async with self._client().pipeline(transaction=True) as pipe:
            pipe.set(self.prefix + key, 0, px=max(1, math.ceil(ttl * 1000)), nx=True)
            pipe.incr(self.prefix + key)
            _, total = await pipe.execute()
        return int(total)
