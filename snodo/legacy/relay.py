"""What one worker must tell another about a shared legacy session (``snodo.legacy.store``).

Two things cannot live in a store. A server-to-client request (the bridge's elicitation,
sampling or roots question) waits in the worker that sent it, but the client's answer is
a POST that may land on any worker. And a session's GET stream is held by one worker,
which must learn when another changed the session's subscriptions or ended it.

So each worker has an origin (random, per process) and mints the ids of the requests it
sends the client as ``ORIGIN.N``: a worker that receives an answer reads the origin off
the id and hands the answer to that worker, with no lookup (``answer``). Changes and
ends are announced to every worker (``announce``). ``RedisRelay`` carries both over
Redis pub/sub, on a channel per origin and one for all; an answer nobody waits for is
dropped with a debug log, never an error to the client. Like the notification bus, a
publish never blocks a request: it queues, and a publisher task sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable
from typing import Any, Final

from snodo.state.replay import _redis

__all__ = ["OnAnnounce", "OnAnswer", "RedisRelay"]

log = logging.getLogger("snodo.legacy")

MAX_PENDING: Final = 1000
MAX_BACKOFF: Final = 5.0

OnAnswer = Callable[[str, dict[str, Any]], None]
"""Takes a session id and the client's JSON-RPC response for a request sent from here."""
OnAnnounce = Callable[[str, str], None]
"""Takes a session id and what happened to it: ``"changed"`` or ``"ended"``."""


class RedisRelay:
    """Answers and announcements between the workers of one server, over Redis pub/sub."""

    def __init__(self, url: str, *, prefix: str = "snodo:legacy", timeout: float = 2.0) -> None:
        _redis()
        self._url = url
        self.prefix = prefix
        self.timeout = timeout
        self.origin = secrets.token_hex(6)
        """Prefixes the ids of the requests this worker sends to clients."""
        self._client: Any = None
        self._pending: asyncio.Queue[tuple[str, str]] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._on_answer: OnAnswer | None = None
        self._on_announce: OnAnnounce | None = None
        self._warned: set[str] = set()

    def _channel(self, origin: str) -> str:
        return f"{self.prefix}:to:{origin}"

    def answer(self, origin: str, session_id: str, response: dict[str, Any]) -> None:
        """Hand the client's ``response`` to the worker ``origin`` that waits for it."""
        body = json.dumps({"session": session_id, "response": response}, separators=(",", ":"))
        self._queue(self._channel(origin), body)

    def announce(self, session_id: str, what: str) -> None:
        """Tell every worker that ``session_id`` changed or ended."""
        body = json.dumps({"session": session_id, "announce": what}, separators=(",", ":"))
        self._queue(f"{self.prefix}:all", body)

    def _queue(self, channel: str, body: str) -> None:
        if self._pending is None:
            log.debug("legacy relay not started: a message stays in this worker")
            return
        try:
            self._pending.put_nowait((channel, body))
        except asyncio.QueueFull:
            self._warn_once("full", "legacy relay: %d messages unsent, dropping", MAX_PENDING)

    async def start(self, on_answer: OnAnswer, on_announce: OnAnnounce) -> None:
        """Connect and subscribe (waiting at most ``timeout``); nothing the second time."""
        if self._pending is not None:
            return
        redis = _redis()
        self._client = redis.asyncio.Redis.from_url(
            self._url,
            socket_connect_timeout=self.timeout,
            retry=redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0),
            protocol=2,
        )
        self._on_answer, self._on_announce = on_answer, on_announce
        pending: asyncio.Queue[tuple[str, str]] = asyncio.Queue(MAX_PENDING)
        self._pending = pending
        subscribed = asyncio.Event()
        self._tasks = [
            asyncio.create_task(self._publishing(pending), name="snodo-legacy-publish"),
            asyncio.create_task(self._subscribing(subscribed), name="snodo-legacy-subscribe"),
        ]
        try:
            await asyncio.wait_for(subscribed.wait(), self.timeout)
        except TimeoutError:
            log.warning("legacy relay: not subscribed yet; answers from other workers wait")

    async def stop(self) -> None:
        if self._pending is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._pending.join(), self.timeout)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        client, self._client = self._client, None
        self._tasks, self._pending = [], None
        await client.aclose()

    def _warn_once(self, what: str, message: str, *args: Any) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message, *args)

    async def _publishing(self, pending: asyncio.Queue[tuple[str, str]]) -> None:
        while True:
            channel, body = await pending.get()
            try:
                async with asyncio.timeout(self.timeout):
                    await self._client.publish(channel, body)
                self._warned.discard("publish")
            except Exception as exc:  # Redis down must not end the loop
                self._warn_once("publish", "legacy relay: publishing failed, dropping: %r", exc)
            finally:
                pending.task_done()

    async def _subscribing(self, subscribed: asyncio.Event) -> None:
        backoff = 0.1
        while True:
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                async with asyncio.timeout(self.timeout):
                    await pubsub.subscribe(self._channel(self.origin), f"{self.prefix}:all")
                subscribed.set()
                self._warned.discard("subscribe")
                backoff = 0.1
                while True:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "message":
                        self._received(message["data"])
            except Exception as exc:  # Redis down must not end the loop
                subscribed.clear()
                self._warn_once("subscribe", "legacy relay: subscription lost, retrying: %r", exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)

    def _received(self, raw: str | bytes) -> None:
        try:
            body = json.loads(raw)
            session = body["session"]
            if not isinstance(session, str):
                raise ValueError("no session")
            if isinstance(body.get("response"), dict) and self._on_answer is not None:
                self._on_answer(session, body["response"])
            elif body.get("announce") in ("changed", "ended") and self._on_announce is not None:
                self._on_announce(session, body["announce"])
        except Exception:
            log.debug("legacy relay: ignoring a message it cannot use", exc_info=True)
