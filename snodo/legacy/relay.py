"""What one worker must tell another about a shared legacy session (``snodo.legacy.store``).

Three things cannot live in a store. A server-to-client request (the bridge's elicitation,
sampling or roots question) waits in the worker that sent it, but the client's answer is
a POST that may land on any worker. And a session's GET stream is held by one worker,
which must learn when another changed the session's subscriptions or ended it. And a
request runs in the worker it was posted to, while the client's
``notifications/cancelled`` naming it may land on another.

So each worker has an origin (random, per process) and mints the ids of the requests it
sends the client as ``ORIGIN.N``: a worker that receives an answer reads the origin off
the id and hands the answer to that worker, with no lookup (``answer``). Changes and
ends are announced to every worker (``announce``), and so is a cancellation of a request
the receiving worker does not run (``cancel``): the one that runs it cancels it.
``RedisRelay`` carries them over Redis pub/sub, on a channel per origin and one for all;
an answer nobody waits for is dropped with a debug log, never an error to the client. It
rides on the notification bus's link (``RedisLink``): a publish never blocks a request,
it queues, and a publisher task sends.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable
from typing import Any

from snodo.stores.pubsub import RedisLink

__all__ = ["OnAnnounce", "OnAnswer", "OnCancel", "RedisRelay"]

log = logging.getLogger("snodo.legacy")

OnAnswer = Callable[[str, dict[str, Any]], None]
"""Takes a session id and the client's JSON-RPC response for a request sent from here."""
OnAnnounce = Callable[[str, str], None]
"""Takes a session id and what happened to it: ``"changed"`` or ``"ended"``."""
OnCancel = Callable[[str, str | int], None]
"""Takes a session id and the id of the request of that session the client cancelled."""


class RedisRelay:
    """Answers and announcements between the workers of one server, over Redis pub/sub
    (``snodo.stores.pubsub.RedisLink``, as the notification bus)."""

    def __init__(self, url: str, *, prefix: str = "snodo:legacy", timeout: float = 2.0) -> None:
        self.prefix = prefix
        self.origin = secrets.token_hex(6)
        """Prefixes the ids of the requests this worker sends to clients."""
        channels = (self._channel(self.origin), f"{prefix}:all")
        self._link = RedisLink(url, channels, timeout=timeout, name="legacy relay", logger=log)
        self._on_answer: OnAnswer | None = None
        self._on_announce: OnAnnounce | None = None
        self._on_cancel: OnCancel | None = None

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

    def cancel(self, session_id: str, request_id: str | int) -> None:
        """Tell every worker that the client cancelled ``request_id`` of ``session_id``."""
        body = json.dumps({"session": session_id, "cancel": request_id}, separators=(",", ":"))
        self._queue(f"{self.prefix}:all", body)

    def _queue(self, channel: str, body: str) -> None:
        if not self._link.publish(channel, body):
            log.debug("legacy relay not started: a message stays in this worker")

    async def start(
        self, on_answer: OnAnswer, on_announce: OnAnnounce, on_cancel: OnCancel | None = None
    ) -> None:
        """Connect and subscribe (waiting at most ``timeout``); nothing the second time."""
        self._on_answer, self._on_announce = on_answer, on_announce
        self._on_cancel = on_cancel
        await self._link.start(self._received)

    async def stop(self) -> None:
        await self._link.stop()

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
            elif "cancel" in body and self._on_cancel is not None:
                request_id = body["cancel"]
                if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                    self._on_cancel(session, request_id)
        except Exception:
            log.debug("legacy relay: ignoring a message it cannot use", exc_info=True)
