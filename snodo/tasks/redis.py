"""Task records in Redis, shared by workers on many hosts (the ``snodo[redis]`` extra).

One string key per task, its JSON record, expiring with the task's TTL (PX, computed
with the store's clock). An update is an optimistic transaction: WATCH the
key, read it, change it, then MULTI/SET/EXEC; if another writer changed the key in
between, EXEC fails and the update runs again on the new value.
"""

from __future__ import annotations

import asyncio
import math
import time
import weakref
from collections.abc import Callable
from typing import Any, Final

from snodo.state.replay import _redis
from snodo.tasks.record import Change, TaskRecord

__all__ = ["RedisTaskStore"]

DEFAULT_PREFIX: Final = "snodo:task:"


class RedisTaskStore:
    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not url.startswith(("redis://", "rediss://")):
            raise ValueError("RedisTaskStore URL must start with redis:// or rediss://")
        _redis()  # ImportError naming the extra now, not on the first request
        self._url = url
        self.prefix = prefix
        self.timeout = timeout
        self.clock = clock
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]
        self._clients = weakref.WeakKeyDictionary()

    @property
    def url(self) -> str:
        return self._url

    def _client(self) -> Any:
        """This event loop's client (asyncio connections belong to the loop that made them)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            redis = _redis()
            client = redis.asyncio.Redis.from_url(
                self._url, socket_connect_timeout=self.timeout, protocol=2
            )
            self._clients[loop] = client
        return client

    def _expiry(self, record: TaskRecord) -> dict[str, int]:
        """PX, relative and computed with the store's clock (as RedisGuard does), so the
        Redis host's clock does not matter; the store's own expiry check stays exact."""
        at = record.expires_at()
        return {} if at is None else {"px": max(1, math.ceil((at - self.clock()) * 1000))}

    async def create(self, record: TaskRecord) -> None:
        async with asyncio.timeout(self.timeout):
            created = await self._client().set(
                self.prefix + record.task_id, record.to_json(), nx=True, **self._expiry(record)
            )
        if not created:
            raise ValueError(f"task {record.task_id} exists")

    async def get(self, task_id: str) -> TaskRecord | None:
        async with asyncio.timeout(self.timeout):
            raw = await self._client().get(self.prefix + task_id)
        if raw is None:
            return None
        record = TaskRecord.from_json(raw)
        return None if record.expired(self.clock()) else record

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        redis = _redis()
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
                        await pipe.execute()
                        return changed
                    except redis.exceptions.WatchError:
                        continue  # another writer won; read again

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
