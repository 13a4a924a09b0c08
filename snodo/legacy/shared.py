"""Legacy HTTP sessions shared by every worker: the table's half that talks to the others.

With ``LegacyLimits(store="redis://...")`` a session is a record in the store
(``snodo.legacy.store``), and each worker that meets it keeps a view: a
``LegacySession`` restored from the record on every request, which holds what cannot
travel (its requests in flight, the questions it sent the client, its GET stream).
``find`` loads and renews the record; ``create`` and ``delete`` write it for everyone;
``changed`` writes back what ``logging/setLevel`` or a subscription changed. The
relay (``snodo.legacy.relay``) carries the client's answers to the worker that asked
(``relayed``, by the origin in the question's id) and announces changes and ends, so
the worker holding a GET stream watches the right URIs and a DELETE ends the stream
wherever it is held; a ``notifications/cancelled`` for a request another worker runs
reaches that worker (``cancel``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from snodo.legacy.relay import RedisRelay
from snodo.legacy.session import LegacySession
from snodo.legacy.store import RedisSessionStore, StoreUnavailable
from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits

__all__ = ["Entry", "SharedSessions"]

log = logging.getLogger("snodo.legacy")

SHARED_FACTS = frozenset({"logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
"""The requests that change a session's shared record."""


@dataclass(eq=False, slots=True)
class Entry:
    """A session this worker holds (or, with a shared store, its view of one)."""

    session: LegacySession
    last_seen: float
    busy: int = 0
    streaming: bool = False
    owner: str = ""
    """Who opened it (``LegacyHttp.owned``); a view of another worker's session: none."""
    tasks: dict[Any, asyncio.Task[Any]] = field(default_factory=dict)


class Table(Protocol):
    """What the shared half needs of the HTTP session table."""

    sessions: dict[str, Entry]
    limits: LegacyLimits

    def clock(self) -> float: ...

    def _sweep(self) -> None: ...

    def _end(self, key: str) -> None: ...


class SharedSessions:
    """The store and the relay of one worker's legacy session table."""

    def __init__(self, store: RedisSessionStore, server: Server, table: Table) -> None:
        self.store = store
        self.relay = RedisRelay(store.url, prefix=store.prefix)
        self.server = server
        self.table = table
        self.ttl = table.limits.idle_timeout
        self._reloads: set[asyncio.Future[None]] = set()

    async def start(self) -> None:
        await self.relay.start(self._answered, self._announced, self._cancelled)

    async def stop(self) -> None:
        await self.relay.stop()
        await self.store.close()

    async def find(self, key: str, principal: str | None, mine: bool = True) -> Entry | None:
        """The session's record, renewed, in this worker's view of it; None when it is
        gone or (``mine``) another principal's. ``StoreUnavailable`` passes through."""
        record = await self.store.load(key, self.ttl) if key else None
        if record is None:
            self.table._end(key)
            return None
        if mine and record.principal != principal:
            return None
        entry = self.table.sessions.get(key)
        if entry is None:
            self.table._sweep()
            view = LegacySession(
                self.table.limits,
                principal=record.principal,
                session_id=key,
                id_prefix=self.relay.origin,
            )
            entry = self.table.sessions[key] = Entry(view, self.table.clock())
        entry.session.restore(record, self.server.subscriptions, self.server.observer)
        entry.last_seen = self.table.clock()
        return entry

    async def create(self, session: LegacySession, owner: str) -> bool:
        """Keep a new session's record; False when ``max_sessions`` are live. At the
        owner's cap (counted in the store, across workers) its least recently used
        session ends, here and wherever it is held."""
        session.owner = owner
        limits = self.table.limits
        created = await self.store.create(
            session.record(), self.ttl, limits.max_sessions, limits.max_sessions_per_principal
        )
        if created.ended is not None:
            self.table._end(created.ended)
            self.relay.announce(created.ended, "ended")
        return created.kept

    async def delete(self, session_id: str) -> None:
        await self.store.delete(session_id)
        self.relay.announce(session_id, "ended")

    async def changed(self, session: LegacySession, method: str) -> None:
        """Write what a request changed; a change of subscriptions is announced, for
        the worker that holds the session's GET stream."""
        if method not in SHARED_FACTS:
            return
        await self.store.save(session.record(), self.ttl)
        if method != "logging/setLevel":
            self.relay.announce(session.id, "changed")

    def relayed(self, session: LegacySession, message: Any) -> bool:
        """Hand a client's answer to the worker that asked (the origin its id begins
        with); False when the answer is this worker's own to resolve."""
        response_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(response_id, str) or "." not in response_id:
            return False
        origin = response_id.split(".", 1)[0]
        if origin == self.relay.origin:
            return False
        self.relay.answer(origin, session.id, dict(message))
        return True

    def cancel(self, session_id: str, request_id: object) -> None:
        """The client cancelled a request of its session that this worker does not run:
        the worker that runs it cancels it."""
        if isinstance(request_id, str | int) and not isinstance(request_id, bool):
            self.relay.cancel(session_id, request_id)

    def _cancelled(self, session_id: str, request_id: str | int) -> None:
        """Another worker received the client's cancellation of a request."""
        entry = self.table.sessions.get(session_id)
        task = None if entry is None else entry.tasks.get(request_id)
        if task is not None:
            task.cancel()

    def _answered(self, session_id: str, response: dict[str, Any]) -> None:
        """Another worker received the client's answer to a question sent from here."""
        entry = self.table.sessions.get(session_id)
        resolved = entry is not None and entry.session.resolve(
            response.get("id"), response.get("result"), response.get("error")
        )
        if not resolved:
            log.debug("legacy: an answer for %r nobody here waits for", response.get("id"))

    def _announced(self, session_id: str, what: str) -> None:
        """Another worker changed or ended a session this worker may hold a view of."""
        if session_id not in self.table.sessions:
            return
        if what == "ended":
            self.table._end(session_id)
        else:
            reload = asyncio.ensure_future(self._reload(session_id))
            self._reloads.add(reload)
            reload.add_done_callback(self._reloads.discard)

    async def _reload(self, session_id: str) -> None:
        with contextlib.suppress(StoreUnavailable):
            await self.find(session_id, None, mine=False)
