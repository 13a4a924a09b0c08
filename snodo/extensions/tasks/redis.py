"""Task records in Redis, shared by workers on many hosts (the ``snodo[redis]`` extra).

One string key per task, its JSON record, expiring with the task's TTL (PX, computed
with the store's clock). An update is an optimistic transaction: WATCH the
key, read it, change it, then MULTI/SET/EXEC; if another writer changed the key in
between, EXEC fails and the update runs again on the new value.

Two sorted sets bound the records: ``PREFIX#kept`` holds every id by expiry time
(``inf`` without a TTL) and counts them, ``PREFIX#finished`` the terminal ones by the
time they finished. A create is one script, atomic in Redis: drop the expired ids, and
at ``max_records`` delete the task that finished longest ago, or refuse (``StoreFull``).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any, Final

from snodo.extensions.tasks.record import MAX_RECORDS, Change, StoreFull, TaskRecord
from snodo.stores.redis import RedisClients, redis_module

__all__ = ["RedisTaskStore"]

DEFAULT_PREFIX: Final = "snodo:task:"

_CREATE: Final = """
local kept, finished, key = KEYS[1], KEYS[2], KEYS[3]
local prefix, id, value, px, now, max, expiry = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]),
  ARGV[5], tonumber(ARGV[6]), ARGV[7]
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', kept, '-inf', now)) do
  redis.call('DEL', prefix .. gone)
  redis.call('ZREM', kept, gone)
  redis.call('ZREM', finished, gone)
end
if redis.call('EXISTS', key) == 1 then return -1 end
if redis.call('ZCARD', kept) >= max then
  local oldest = redis.call('ZRANGE', finished, 0, 0)
  if #oldest == 0 then return 0 end
  redis.call('DEL', prefix .. oldest[1])
  redis.call('ZREM', kept, oldest[1])
  redis.call('ZREM', finished, oldest[1])
end
if px > 0 then
  redis.call('SET', key, value, 'PX', px)
else
  redis.call('SET', key, value)
end
redis.call('ZADD', kept, expiry, id)
return 1
"""
"""Create a record within ``max_records`` (1), or say its id is taken (-1) or that no
finished task can make room (0)."""


class RedisTaskStore:
    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        max_records: int = MAX_RECORDS,
    ) -> None:
        if max_records <= 0:
            raise ValueError("max_records must be positive")
        self.max_records = max_records
        self._connections = RedisClients(url, "RedisTaskStore", timeout=timeout)
        self.prefix = prefix
        self.timeout = timeout
        self.clock = clock

    @property
    def url(self) -> str:
        return self._connections.url

    def _client(self) -> Any:
        return self._connections.client()

    def _expiry(self, record: TaskRecord) -> dict[str, int]:
        """PX, relative and computed with the store's clock (as RedisGuard does), so the
        Redis host's clock does not matter; the store's own expiry check stays exact."""
        at = record.expires_at()
        return {} if at is None else {"px": max(1, math.ceil((at - self.clock()) * 1000))}

    async def create(self, record: TaskRecord) -> None:
        at = record.expires_at()
        px = self._expiry(record).get("px", 0)
        async with asyncio.timeout(self.timeout):
            created = await self._client().eval(
                _CREATE,
                3,
                self.prefix + "#kept",
                self.prefix + "#finished",
                self.prefix + record.task_id,
                self.prefix,
                record.task_id,
                record.to_json(),
                px,
                repr(self.clock()),
                self.max_records,
                "inf" if at is None else repr(at),
            )
        if created == -1:
            raise ValueError(f"task {record.task_id} exists")
        if created == 0:
            raise StoreFull(self.max_records)

    async def get(self, task_id: str) -> TaskRecord | None:
        async with asyncio.timeout(self.timeout):
            raw = await self._client().get(self.prefix + task_id)
        if raw is None:
            return None
        record = TaskRecord.from_json(raw)
        return None if record.expired(self.clock()) else record

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        redis = redis_module("RedisTaskStore")
        key = self.prefix + task_id
        async with asyncio.timeout(self.timeout):
            async with self._client().pipeline(transaction=True) as pipe:
                while True:
                    try:
                        await pipe.watch(key)
                        raw = await pipe.get(key)
                        if raw is None:
                            return None
                        record = TaskRecord.from_json(raw)
                        if record.expired(self.clock()):
                            return None
                        changed = change(record)
                        if changed is None:
                            return record
                        pipe.multi()
                        pipe.set(key, changed.to_json(), **self._expiry(changed))
                        at = changed.expires_at()
                        pipe.zadd(
                            self.prefix + "#kept",
                            {task_id: "inf" if at is None else at},
                            xx=True,
                        )
                        if changed.terminal and not record.terminal:
                            pipe.zadd(self.prefix + "#finished", {task_id: changed.updated_at})
                        await pipe.execute()
                        return changed
                    except redis.exceptions.WatchError:
                        continue  # another writer won; read again

    async def aclose(self) -> None:
        await self._connections.aclose()
