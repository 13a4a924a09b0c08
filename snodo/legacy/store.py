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
set of ids by expiry, so an initialize beyond it gets 503 wherever it lands. Each
owner's sessions (``max_sessions_per_principal``) are counted there too, in a set of
ids per owner: at its cap a new session ends the owner's least recently used one, for
every worker. Both counts are checked and the record written in one script, so
workers initializing at once cannot pass a bound together. A store that cannot be
reached raises ``StoreUnavailable``, which the transport answers with 503 and a
JSON-RPC error at once: a request never hangs on it.
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
    "Created",
    "RedisSessionStore",
    "SessionRecord",
    "SessionStore",
    "StoreUnavailable",
    "session_store",
]

DEFAULT_PREFIX: Final = "snodo:legacy"

_CREATE: Final = """
local live, owned, key = KEYS[1], KEYS[2], KEYS[3]
local now, expiry, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local most, cap = tonumber(ARGV[4]), tonumber(ARGV[5])
local id, record, records = ARGV[6], ARGV[7], ARGV[8]
redis.call('ZREMRANGEBYSCORE', live, '-inf', now)
local count, oldest, oldest_use = 0, nil, nil
local others = {}
if cap > 0 then others = redis.call('SMEMBERS', owned) end
for _, other in ipairs(others) do
  local use = redis.call('ZSCORE', live, other)
  if use then
    count = count + 1
    use = tonumber(use)
    if oldest_use == nil or use < oldest_use then oldest, oldest_use = other, use end
  else
    redis.call('SREM', owned, other)
  end
end
local ending = cap > 0 and count >= cap
local taken = redis.call('ZCARD', live)
if ending then taken = taken - 1 end
if taken >= most then return {0, ''} end
local ended = ''
if ending then
  redis.call('SREM', owned, oldest)
  redis.call('ZREM', live, oldest)
  redis.call('DEL', records .. oldest)
  ended = oldest
end
redis.call('SET', key, record, 'PX', ttl)
redis.call('ZADD', live, expiry, id)
if cap > 0 then
  redis.call('SADD', owned, id)
  redis.call('PEXPIRE', owned, ttl)
end
return {1, ended}
"""
"""A new session, within the live count and its owner's (at the cap, the owner's least
recently used session ends): 1 and the id it ended ('' none), or 0 when all are taken."""

_LOAD: Final = """
local key, live = KEYS[1], KEYS[2]
local ttl, expiry, id, owners = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local raw = redis.call('GET', key)
if not raw then
  redis.call('ZREM', live, id)
  return false
end
redis.call('PEXPIRE', key, ttl)
redis.call('ZADD', live, expiry, id)
local ok, body = pcall(cjson.decode, raw)
if ok and type(body) == 'table' and type(body.owner) == 'string' and body.owner ~= '' then
  redis.call('PEXPIRE', owners .. body.owner, ttl)
end
return raw
"""
"""The record, its expiry, its place in the live count and its owner's set renewed."""


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
    owner: str = ""
    """Who opened it (``snodo.legacy.owners.owner_of``), whose sessions are counted."""

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


@dataclass(frozen=True, slots=True)
class Created:
    """What ``create`` did: whether the record is kept, and the id of the owner's
    session it ended to make room (None: none). True when kept."""

    kept: bool
    ended: str | None = None

    def __bool__(self) -> bool:
        return self.kept


class SessionStore(Protocol):
    """The records of the legacy sessions every worker shares."""

    async def create(
        self, record: SessionRecord, ttl: float, max_sessions: int, per_owner: int = 0
    ) -> Created:
        """Keep a new record for ``ttl`` seconds, unless ``max_sessions`` live already;
        with ``per_owner``, at that many live sessions of ``record.owner`` the least
        recently used one of them ends."""
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
    session) and a sorted set of live ids by expiry (``PREFIX:live``) that counts them;
    a set of each owner's ids (``PREFIX:o:OWNER``, expiring with its last used session)
    that counts theirs. ``timeout`` bounds every call; past it, ``StoreUnavailable``."""

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

    def _owned(self, owner: str) -> str:
        return f"{self.prefix}:o:{owner}"

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

    async def create(
        self, record: SessionRecord, ttl: float, max_sessions: int, per_owner: int = 0
    ) -> Created:
        now = self.clock()
        keys = (f"{self.prefix}:live", self._owned(record.owner), self._key(record.id))
        values = (now, now + ttl, int(ttl * 1000), max_sessions, per_owner, record.id)
        arguments = (*values, record.encode(), self._key(""))
        [(kept, ended)] = await self._run(
            lambda pipe: pipe.eval(_CREATE, len(keys), *keys, *arguments), atomic=False
        )
        if isinstance(ended, bytes):
            ended = ended.decode()
        return Created(bool(kept), ended or None)

    async def load(self, session_id: str, ttl: float) -> SessionRecord | None:
        keys = (self._key(session_id), f"{self.prefix}:live")
        arguments = (int(ttl * 1000), self.clock() + ttl, session_id, self._owned(""))
        [raw] = await self._run(
            lambda pipe: pipe.eval(_LOAD, len(keys), *keys, *arguments), atomic=False
        )
        if raw is None:
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
