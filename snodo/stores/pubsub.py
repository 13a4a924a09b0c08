"""Redis pub/sub for one process: the link every cross-worker message rides on.

The notification bus, the legacy relay and the gateway's relay each carry messages
between workers the same way: a publish never blocks a request (it queues, and a
publisher task sends), a subscriber task hands on what arrives, and an outage is logged
once and outlived (the subscriber resubscribes with backoff). Pub/sub is at-most-once:
what the users of the link carry are hints or calls with their own timeouts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from snodo.stores.redis import connect, redis_module, redis_url

__all__ = ["MAX_BACKOFF", "MAX_PENDING", "RedisLink"]

MAX_PENDING: Final = 1000
"""Messages waiting to be published; beyond it new ones are dropped (Redis is slow or
down, and an unbounded queue would only turn that into memory growth)."""
MAX_BACKOFF: Final = 5.0
"""Longest wait, in seconds, between two attempts to resubscribe after Redis failed."""


class RedisLink:
    """Redis pub/sub for one process: a bounded queue of messages a publisher task sends,
    and a subscriber task that hands every message of ``channels`` to ``on_message``,
    resubscribing with backoff when Redis goes away. Neither ever blocks a request or
    raises; each outage is logged once (as ``name``, on ``logger``). ``RedisBus`` carries
    notices on it (``snodo.server.notify_bus``), the legacy relay (``snodo.legacy.relay``)
    answers and announcements between workers, the gateway's relay (``snodo.gateway.relay``)
    a legacy backend's answers."""

    def __init__(
        self,
        url: str,
        channels: tuple[str, ...],
        *,
        timeout: float,
        name: str,
        logger: logging.Logger,
    ) -> None:
        self._url = redis_url(url, name)
        redis_module(name)  # the ImportError naming the extra now, not when serving starts
        self.channels = channels
        self.timeout = timeout
        self.name = name
        self.log = logger
        self._client: Any = None
        # Made by ``start``: asyncio queues and events belong to one event loop.
        self._pending: asyncio.Queue[tuple[str, str]] | None = None
        self._subscribed: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._warned: set[str] = set()

    @property
    def running(self) -> bool:
        return self._pending is not None

    @property
    def subscribed(self) -> bool:
        """Whether messages from other processes can reach this one right now."""
        return self._subscribed is not None and self._subscribed.is_set()

    def publish(self, channel: str, body: str) -> bool:
        """Queue ``body`` for ``channel``; False before ``start`` (nothing is sent)."""
        if self._pending is None:
            return False
        try:
            self._pending.put_nowait((channel, body))
        except asyncio.QueueFull:
            self._warn_once("full", "%s: %d unsent, dropping new ones", self.name, MAX_PENDING)
        else:
            self._warned.discard("full")
        return True

    async def start(self, on_message: Callable[[str | bytes], None]) -> None:
        """Connect, start the publisher and subscriber tasks, and wait up to ``timeout``
        for the subscription; nothing if already started."""
        if self._pending is not None:
            return
        # One client for the link's life: it belongs to the loop that started it.
        self._client = connect(self._url, self.name, timeout=self.timeout)
        pending: asyncio.Queue[tuple[str, str]] = asyncio.Queue(MAX_PENDING)
        self._pending = pending
        self._subscribed = subscribed = asyncio.Event()
        self._warned.clear()
        self._tasks = [
            asyncio.create_task(self._publishing(pending), name=f"{self.name} publish"),
            asyncio.create_task(
                self._subscribing(subscribed, on_message), name=f"{self.name} subscribe"
            ),
        ]
        try:
            await asyncio.wait_for(subscribed.wait(), self.timeout)
        except TimeoutError:
            self.log.warning("%s: not subscribed yet; other workers' messages wait", self.name)

    async def stop(self) -> None:
        """Publish what is queued (within ``timeout``), stop both tasks, close the client."""
        if self._pending is None:
            return
        # What was raised before the stop still goes out, within the publish timeout.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._pending.join(), self.timeout)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        client = self._client
        self._tasks, self._client = [], None
        self._pending = self._subscribed = None  # what is still queued is dropped
        await client.aclose()

    def _warn_once(self, what: str, message: str, *args: Any) -> None:
        """One warning per episode: an outage, a full queue, not one per message."""
        if what not in self._warned:
            self._warned.add(what)
            self.log.warning(message, *args)

    async def _publishing(self, pending: asyncio.Queue[tuple[str, str]]) -> None:
        while True:
            channel, body = await pending.get()
            try:
                async with asyncio.timeout(self.timeout):
                    await self._client.publish(channel, body)
            except Exception as exc:  # Redis down must not end the loop
                self._warn_once("publish", "%s: publishing failed, dropping: %r", self.name, exc)
            else:
                if "publish" in self._warned:
                    self._warned.discard("publish")
                    self.log.info("%s: publishing again", self.name)
            finally:
                pending.task_done()

    async def _subscribing(
        self, subscribed: asyncio.Event, on_message: Callable[[str | bytes], None]
    ) -> None:
        backoff = 0.1
        while True:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                async with asyncio.timeout(self.timeout):
                    await pubsub.subscribe(*self.channels)
                subscribed.set()
                if "subscribe" in self._warned:
                    self._warned.discard("subscribe")
                    self.log.info("%s: subscribed again", self.name)
                backoff = 0.1
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        on_message(message["data"])
            except Exception as exc:  # Redis down must not end the loop
                subscribed.clear()
                self._warn_once("subscribe", "%s: subscription lost, retrying: %r", self.name, exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)
