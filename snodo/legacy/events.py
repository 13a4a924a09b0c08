"""The event logs of legacy SSE streams, so a lost stream can be resumed (the legacy
basic/transports.mdx, "Resumability and Redelivery").

Every SSE stream of a legacy session (a POST's answer, the GET stream) has an id of its
own, and each event on it the id ``STREAM.N``: N counts from 0, the priming event
(an id and empty data) the server sends first, so a client can resume even before the
first message. Each message sent is appended to the stream's log, which keeps the
latest ``max_events`` (``LegacyLimits.max_stream_events``); a POST stream's log also
records that it ended (its answer was sent).

A client whose stream broke sends GET with ``Last-Event-ID``. The worker that takes it
(any worker, with a shared store) replays what the log holds after that event, and
then, for a POST stream whose answer has not come yet, waits on the log for the rest:
the answer, or the question a bridged flow still asks. Only the stream the id names is
replayed. An event older than what the log keeps cannot be replayed (the GET gets 404
and the client starts over).

``MemoryEventLog``: this process's streams, woken on each append. ``RedisEventLog``:
one Redis list per stream (``PREFIX:ev:SESSION:STREAM``), trimmed to ``max_events``,
expiring with the session; a resuming reader polls it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from snodo.legacy.store import RedisSessionStore

__all__ = ["EventLog", "MemoryEventLog", "RedisEventLog", "parse_event_id"]

POLL_SECONDS: Final = 0.1
"""How often a reader resuming from Redis looks for new events."""
MAX_STREAMS: Final = 4096
"""Streams one process's memory log keeps (oldest dropped first)."""

Event = tuple[int, dict[str, Any] | None]
"""A logged event: its number, and its message (None: the stream ended there)."""


def parse_event_id(value: str) -> tuple[str, int] | None:
    """``STREAM.N`` as (stream, N); None for anything else."""
    stream, dot, number = value.strip().rpartition(".")
    if not dot or not stream or not number.isdigit() or len(number) > 9:
        return None
    return stream, int(number)


class EventLog(Protocol):
    immediate: bool
    """Whether appending is cheap enough to wait for before sending (memory)."""

    async def append(self, session: str, stream: str, seq: int, message: dict[str, Any]) -> None:
        """Log message number ``seq`` of a stream."""
        ...

    async def end(self, session: str, stream: str, seq: int) -> None:
        """The stream ended after event ``seq - 1`` (a POST's answer went out)."""
        ...

    async def extend(self, session: str, stream: str, events: list[Event]) -> None:
        """Log several events at once (a message of None: the end), in order."""
        ...

    def replay(
        self, session: str, stream: str, after: int, follow: bool = True
    ) -> AsyncGenerator[Event, None]:
        """The events after ``after``, then (``follow``) the ones still to come until the
        stream ends; ``LookupError`` when the log no longer holds event ``after + 1``."""
        ...


@dataclass(slots=True)
class _Stream:
    events: deque[Event]
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class MemoryEventLog:
    """The streams of this process: what one worker, or an affine balancer, needs."""

    immediate = True

    def __init__(self, max_events: int) -> None:
        self.max_events = max_events
        self._streams: OrderedDict[tuple[str, str], _Stream] = OrderedDict()

    def _stream(self, session: str, stream: str) -> _Stream:
        key = (session, stream)
        found = self._streams.get(key)
        if found is None:
            found = self._streams[key] = _Stream(deque(maxlen=self.max_events))
            while len(self._streams) > MAX_STREAMS:
                self._streams.popitem(last=False)
        return found

    async def append(self, session: str, stream: str, seq: int, message: dict[str, Any]) -> None:
        self._add(session, stream, (seq, message))

    async def end(self, session: str, stream: str, seq: int) -> None:
        self._add(session, stream, (seq, None))

    async def extend(self, session: str, stream: str, events: list[Event]) -> None:
        for event in events:
            self._add(session, stream, event)

    def _add(self, session: str, stream: str, event: Event) -> None:
        found = self._stream(session, stream)
        found.events.append(event)
        found.changed.set()
        found.changed = asyncio.Event()

    def forget(self, session: str) -> None:  # the memory log's own
        """Drop a session's streams (it ended)."""
        for key in [key for key in self._streams if key[0] == session]:
            del self._streams[key]

    async def replay(
        self, session: str, stream: str, after: int, follow: bool = True
    ) -> AsyncGenerator[Event, None]:
        found = self._streams.get((session, stream))
        if found is None or (found.events and found.events[0][0] > after + 1):
            raise LookupError("the log no longer holds that event")
        last = after
        while True:
            for seq, message in list(found.events):
                if seq <= last:
                    continue
                yield seq, message
                last = seq
                if message is None:
                    return
            if not follow:
                return
            await found.changed.wait()


class RedisEventLog:
    """Stream logs in the shared session store's Redis."""

    immediate = False

    def __init__(self, store: RedisSessionStore, max_events: int, ttl: float) -> None:
        self.store = store
        self.max_events = max_events
        self.ttl = ttl
        self.clock: Callable[[], float] = time.monotonic

    def _key(self, session: str, stream: str) -> str:
        return f"{self.store.prefix}:ev:{session}:{stream}"

    async def append(self, session: str, stream: str, seq: int, message: dict[str, Any]) -> None:
        await self._push(session, stream, [seq, message])

    async def end(self, session: str, stream: str, seq: int) -> None:
        await self._push(session, stream, [seq, None])

    async def extend(self, session: str, stream: str, events: list[Event]) -> None:
        await self._push(session, stream, *([seq, message] for seq, message in events))

    async def _push(self, session: str, stream: str, *events: list[Any]) -> None:
        key = self._key(session, stream)
        bodies = [json.dumps(event, separators=(",", ":")) for event in events]
        await self.store._run(
            lambda pipe: (
                pipe.rpush(key, *bodies)
                .ltrim(key, -self.max_events, -1)
                .pexpire(key, int(self.ttl * 1000))
            )
        )

    async def replay(
        self, session: str, stream: str, after: int, follow: bool = True
    ) -> AsyncGenerator[Event, None]:
        key = self._key(session, stream)
        last = after
        first = True
        while True:
            [raw] = await self.store._run(lambda pipe: pipe.lrange(key, 0, -1))
            events = [json.loads(item) for item in raw]
            if first and (not events or events[0][0] > after + 1):
                raise LookupError("the log no longer holds that event")
            first = False
            for seq, message in events:
                if seq <= last:
                    continue
                yield seq, message
                last = seq
                if message is None:
                    return
            if not follow:
                return
            await asyncio.sleep(POLL_SECONDS)
