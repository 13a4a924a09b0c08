"""Where legacy sessions live when every worker must answer every session.

A legacy session's facts are few: the negotiated version, the client's capabilities and
info, its log level and resource subscriptions, and who it belongs to. With a store,
those facts are a record any worker can load, so ``Mcp-Session-Id`` needs no affinity:
the worker a request lands on loads the record (which also renews its expiry), answers,
and writes back what the request changed. What cannot be shared (a request in flight,
a server-to-client request waiting for its answer, an open stream) stays with the worker
that holds it; ``snodo.legacy.relay`` carries what must reach it.

``session_store(url)``: ``memory:`` (one process: the table each worker keeps anyway,
so none is made) or ``redis[s]://HOST:PORT/DB`` (``RedisSessionStore``, the
``snodo[redis]`` extra). A record expires ``idle_timeout`` after its last use; the
number of live sessions (``max_sessions``) is counted across all workers, in a sorted
set of ids by expiry, so an initialize beyond it gets 503 wherever it lands. A store
that cannot be reached raises ``StoreUnavailable``, which the transport answers with
503 and a JSON-RPC error at once: a request never hangs on it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final, Protocol

from snodo.stores.redis import RedisClients, RedisError, standard_errors

__all__ = [
    "RedisSessionStore",
    "SessionRecord",
    "SessionStore",
    "StoreUnavailable",
    "session_store",
]

DEFAULT_PREFIX: Final = "snodo:legacy"


class StoreUnavailable(Exception):
    """The session store did not answer in time (Redis down or unreachable)."""


@dataclass(slots=True)
class SessionRecord:
    """What any worker needs to answer a request of a legacy session."""

    id: str
    principal: str | None
    version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None
    log_level: str | None
    subscriptions: list[str] = field(default_factory=list)

    def encode(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @staticmethod
    def decode(raw: str | bytes) -> SessionRecord:
        """The record stored; ValueError when it is not one."""
        body = json.loads(raw)
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            raise ValueError("a session record is an object with an id")
        try:
            return SessionRecord(**body)
        except TypeError as exc:
            raise ValueError(f"not a session record: {exc}") from None


class SessionStore(Protocol):
    """The records of the legacy sessions every worker shares."""

    async def create(self, record: SessionRecord, ttl: float, max_sessions: int) -> bool:
        """Keep a new record for ``ttl`` seconds; False when ``max_sessions`` live already."""
        ...

    async def load(self, session_id: str, ttl: float) -> SessionRecord | None:
        """The record, its expiry renewed to ``ttl`` from now; None if gone."""
        ...

    async def save(self, record: SessionRecord, ttl: float) -> None:
        """Write what a request changed (log level, subscriptions)."""
        ...

    async def delete(self, session_id: str) -> None:
        """End the session for every worker."""
        ...


class RedisSessionStore:
    """Session records in Redis: one key per record (``PREFIX:s:ID``, expiring with the
    session) and a sorted set of live ids by expiry (``PREFIX:live``) that counts them.
    ``timeout`` bounds every call; past it, ``StoreUnavailable``."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._connections = RedisClients(
            url, "RedisSessionStore", timeout=timeout, command_timeout=timeout
        )
        self.prefix = prefix
        self.timeout = timeout
        self.clock = clock

    @property
    def url(self) -> str:
        return self._connections.url

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}:s:{session_id}"

    async def _run(self, commands: Callable[[Any], None], atomic: bool = True) -> list[Any]:
        """One pipeline of ``commands`` (in MULTI/EXEC when ``atomic``), within ``timeout``."""
        try:
            with standard_errors():
                async with asyncio.timeout(self.timeout):
                    pipe = self._connections.client().pipeline(transaction=atomic)
                    commands(pipe)
                    result: list[Any] = await pipe.execute()
                    return result
        except (TimeoutError, OSError, RedisError) as exc:
            raise StoreUnavailable(f"the legacy session store did not answer: {exc!r}") from None

    async def create(self, record: SessionRecord, ttl: float, max_sessions: int) -> bool:
        now = self.clock()
        live = f"{self.prefix}:live"
        _, count = await self._run(
            lambda pipe: pipe.zremrangebyscore(live, "-inf", now).zcard(live)
        )
        if count >= max_sessions:
            return False
        expiry = int(ttl * 1000)
        await self._run(
            lambda pipe: pipe.set(self._key(record.id), record.encode(), px=expiry).zadd(
                live, {record.id: now + ttl}
            )
        )
        return True

    async def load(self, session_id: str, ttl: float) -> SessionRecord | None:
        key, live = self._key(session_id), f"{self.prefix}:live"
        raw, renewed, _ = await self._run(
            lambda pipe: (
                pipe.get(key)
                .pexpire(key, int(ttl * 1000))
                .zadd(live, {session_id: self.clock() + ttl}, xx=True)
            ),
            atomic=False,  # three independent renewals: no transaction needed
        )
        if raw is None or not renewed:
            await self._run(lambda pipe: pipe.zrem(live, session_id))  # not live: uncounted
            return None
        try:
            return SessionRecord.decode(raw)
        except ValueError:
            return None  # not ours to read: as good as gone

    async def save(self, record: SessionRecord, ttl: float) -> None:
        key = self._key(record.id)
        await self._run(lambda pipe: pipe.set(key, record.encode(), px=int(ttl * 1000), xx=True))

    async def delete(self, session_id: str) -> None:
        live = f"{self.prefix}:live"
        await self._run(lambda pipe: pipe.delete(self._key(session_id)).zrem(live, session_id))

    async def close(self) -> None:
        await self._connections.close()


def session_store(url: str, *, prefix: str = DEFAULT_PREFIX) -> RedisSessionStore | None:
    """The store a URL names: None for ``memory:`` (each worker's own table), else Redis."""
    if url in ("memory:", "memory://"):
        return None
    if url.startswith(("redis://", "rediss://")):
        return RedisSessionStore(url, prefix=prefix)
    raise ValueError("a legacy session store URL is memory: or redis://HOST:PORT/DB")
