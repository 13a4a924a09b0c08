"""Notification buses: what one worker raises, the listen streams of every worker hear.

Theory of operation
-------------------
A subscriptions/listen stream is held by exactly one process: the one whose transport
keeps its connection open. A notification is raised by whichever process makes the
change (a task's status moves where the change is written, ``notify_list_changed`` and
``notify_resource_updated`` where the application calls them). ``Subscriptions``
delivers every ``Notice`` raised in this process to this process's streams at once,
then hands it to the server's bus, which carries it to the other processes:

* ``LocalBus`` (the default) carries it nowhere: one process, no cost.
* ``RedisBus(url)`` publishes it on a Redis pub/sub channel, tagged with this bus's
  random origin id. Every bus subscribed to the channel delivers what it receives to
  its own streams, except the origin's, which delivered it already. Each stream lives
  in one process, so it hears each notification once, with its filters (task ids,
  watched URIs, list kinds) applied where it lives, as for a local notice.

A request never waits on Redis: ``publish`` puts the notice on a bounded queue that a
publisher task drains. When Redis is unreachable, the publisher logs once and drops
what it cannot send (and a full queue drops the newest), the subscriber reconnects
with backoff, and local delivery goes on unchanged. Pub/sub is at-most-once: a
process that is not subscribed when a notice is published (starting, reconnecting)
never hears it. Notifications are hints; tasks/get, the lists and resources/read are
the truth a client can always fall back on.

The transports run the bus: ``start(deliver)`` when they begin serving (the ASGI
lifespan, stdio's start), ``stop()`` when they end. A bus belongs to the event loop
that started it; before ``start`` and after ``stop`` it carries nothing.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, cast, get_args

from snodo.stores.pubsub import RedisLink
from snodo.stores.redis import redis_url

__all__ = [
    "Deliver",
    "LocalBus",
    "Notice",
    "NotificationBus",
    "RedisBus",
    "notification_bus",
]

log = logging.getLogger("snodo.notify")

Kind = Literal["list", "resource", "task"]
KINDS: Final = frozenset(get_args(Kind))

DEFAULT_CHANNEL: Final = "snodo:notifications"


@dataclass(frozen=True, slots=True)
class Notice:
    """One notification to fan out, before any stream's id is put on it.

    ``kind`` "list": ``key`` is the listen filter's key (``toolsListChanged``, ...);
    "resource": ``key`` is the updated URI; "task": ``key`` is the task id and ``task``
    the DetailedTask that notifications/tasks carries.
    """

    kind: Kind
    key: str
    task: Mapping[str, Any] | None = None

    def encode(self, origin: str) -> str:
        """The notice as the JSON message a bus publishes, tagged with ``origin``."""
        body: dict[str, Any] = {"origin": origin, "kind": self.kind, "key": self.key}
        if self.task is not None:
            body["task"] = dict(self.task)
        return json.dumps(body, separators=(",", ":"))

    @staticmethod
    def decode(raw: str | bytes) -> tuple[str, Notice]:
        """The origin and the notice of a published message; ValueError if malformed."""
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError("a published notice is a JSON object")
        origin, kind, key, task = (body.get(k) for k in ("origin", "kind", "key", "task"))
        if not (isinstance(origin, str) and isinstance(key, str) and kind in KINDS):
            raise ValueError("a published notice needs origin, kind and key")
        if (kind == "task") != isinstance(task, dict):
            raise ValueError("a task notice, and only a task notice, carries a task object")
        return origin, Notice(cast(Kind, kind), key, task)


Deliver = Callable[[Notice], int]
"""Tells this process's matching streams; returns how many were told."""


class NotificationBus(Protocol):
    """Carries the notices raised in one process to the listen streams of the others."""

    def publish(self, notice: Notice) -> None:
        """Carry a notice raised here to the other processes; never blocks, never raises."""
        ...

    async def start(self, deliver: Deliver) -> None:
        """Begin carrying; notices from other processes go to ``deliver``."""
        ...

    async def stop(self) -> None:
        """Stop carrying and release connections; a bus that never started does nothing."""
        ...


class LocalBus:
    """One process: notices reach this process's streams and go no further."""

    def publish(self, notice: Notice) -> None:
        """Nothing to carry: ``Subscriptions`` has told this process's streams."""

    async def start(self, deliver: Deliver) -> None:
        """Nothing to connect."""

    async def stop(self) -> None:
        """Nothing to close."""


class RedisBus:
    """Notices shared through a Redis pub/sub channel (the ``snodo[redis]`` extra).

    Give every worker of one server the same ``url`` and ``channel``, and different
    servers on one Redis different channels. ``timeout`` bounds connecting and each
    publish, and how long ``start`` waits for the first subscription before serving
    without it (it keeps trying in the background).
    """

    def __init__(self, url: str, *, channel: str = DEFAULT_CHANNEL, timeout: float = 2.0) -> None:
        redis_url(url, "RedisBus")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.channel = channel
        self.timeout = timeout
        self.origin = secrets.token_hex(8)
        """Tags what this bus publishes, so that it skips its own notices."""
        self._link = RedisLink(url, (channel,), timeout=timeout, name="RedisBus", logger=log)
        self._deliver: Deliver | None = None
        self.url = url

    @property
    def running(self) -> bool:
        return self._deliver is not None

    @property
    def subscribed(self) -> bool:
        """Whether notices from other processes can reach this one right now."""
        return self._link.subscribed

    def publish(self, notice: Notice) -> None:
        """Queue the notice for the publisher task (dropped before ``start`` or when full)."""
        if not self._link.publish(self.channel, notice.encode(self.origin)):
            # Registrations at import time, before serving began.
            log.debug("RedisBus not started: a %s notice stays in this process", notice.kind)

    async def start(self, deliver: Deliver) -> None:
        """Connect, start the publisher and subscriber tasks, and wait up to ``timeout``
        for the subscription; nothing if already started."""
        if self._deliver is not None:
            return
        self._deliver = deliver
        await self._link.start(self._received)

    async def stop(self) -> None:
        """Publish what is queued (within ``timeout``), stop both tasks, close the client."""
        await self._link.stop()
        self._deliver = None

    def _received(self, raw: str | bytes) -> None:
        try:
            origin, notice = Notice.decode(raw)
        except ValueError as exc:  # json's errors are ValueErrors too
            log.warning("RedisBus: ignoring a malformed message on %s: %s", self.channel, exc)
            return
        if origin == self.origin or self._deliver is None:
            return  # our own notice: this process's streams heard it when it was raised
        try:
            self._deliver(notice)
        except Exception:
            log.exception("RedisBus: delivering a notice from another worker failed")


def notification_bus(url: str, *, channel: str = DEFAULT_CHANNEL) -> NotificationBus:
    """A bus from a URL: ``memory:`` (this process only) or ``redis[s]://...``."""
    if url in ("memory:", "memory://"):
        return LocalBus()
    if url.startswith(("redis://", "rediss://")):
        return RedisBus(url, channel=channel)
    raise ValueError("a notification bus URL is memory: or redis://HOST:PORT/DB")
