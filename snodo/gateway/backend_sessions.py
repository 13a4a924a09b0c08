"""A legacy backend's sessions, one per front client, so that no front client's
unanswered questions hold up another's calls.

A legacy backend asks its questions inside a session, and bounds what one session may
have waiting (snodo's: 16 questions). Shared by every front client, one client that
leaves its questions unanswered would take them all. So the proxy gives each front
client (``snodo.gateway.front``) a session of its own at a legacy HTTP backend for the
calls that may ask: the backend is one server, so what one session changes the others
see, as when the clients reach it directly.

A stdio backend is one process, its state that process's: another process for each
front client would keep apart what the clients share. There a question names no
request, so the process's calls that may ask take turns instead (``turn_of``): one
runs at a time, in the order they came, and its questions are the running call's.

Bounds: at most ``limit`` sessions at once. A new front client beyond them takes the
place of the one idle longest (its session closed); when every session has a call
running, the call waits for one to end, never refused. A session no call used for
``idle_timeout`` seconds is closed. The front client ``ANONYMOUS`` (a stdio front, or
an app served without ``knowing_peers``) uses the proxy's own session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from snodo.client import Client

__all__ = ["ANONYMOUS", "BackendSession", "BackendSessions"]

ANONYMOUS: Final = "anonymous"
"""The front client of a stdio front (``snodo.gateway.front.front_client``)."""


class BackendSession:
    """One front client's session with the backend: its client, the calls using it,
    and (the proxy's own, to a stdio backend) the turn its asking calls take one at a
    time."""

    def __init__(self, owner: str, one_at_a_time: bool, clock: Callable[[], float]) -> None:
        self.owner = owner
        self.client: Client | None = None
        self.busy = 0
        self.last_used = clock()
        self.turn: asyncio.Lock | None = asyncio.Lock() if one_at_a_time else None
        self.holder: Any = None
        """The call whose turn it is (stdio): the one the backend's questions are for."""

    @contextlib.asynccontextmanager
    async def turn_of(self, call: Any) -> AsyncIterator[None]:
        """Run ``call`` in its turn (at once where calls need none)."""
        if self.turn is None:
            yield
            return
        async with self.turn:
            self.holder = call
            try:
                yield
            finally:
                self.holder = None


class BackendSessions:
    """The backend sessions of one proxy: ``make`` builds a session's client (its
    questions bound to the session), ``main`` is the proxy's own."""

    def __init__(
        self,
        make: Callable[[BackendSession], Client],
        main: BackendSession,
        *,
        limit: int = 32,
        idle_timeout: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if limit < 1 or idle_timeout <= 0:
            raise ValueError("backend sessions: the limit and idle timeout must be positive")
        self.make = make
        self.main = main
        self.limit = limit
        self.idle_timeout = idle_timeout
        self.clock = clock
        self.sessions: dict[str, BackendSession] = {}
        self._changed = asyncio.Condition()
        self._closing: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def using(self, owner: str) -> AsyncIterator[BackendSession]:
        """``owner``'s session while a call uses it: made for it if it has none, in a
        free place or the one idle longest, else once a call ends."""
        session = await self._take(owner)
        try:
            yield session
        finally:
            session.busy -= 1
            session.last_used = self.clock()
            async with self._changed:
                self._changed.notify_all()

    async def _take(self, owner: str) -> BackendSession:
        if owner == ANONYMOUS:
            self.main.busy += 1
            return self.main
        async with self._changed:
            while True:
                self.sweep()
                session = self.sessions.get(owner)
                if session is None and len(self.sessions) < self.limit:
                    session = BackendSession(owner, False, self.clock)
                    session.client = self.make(session)
                    self.sessions[owner] = session
                if session is not None:
                    session.busy += 1
                    session.last_used = self.clock()
                    return session
                idle = [s for s in self.sessions.values() if not s.busy]
                if idle:
                    self._close(min(idle, key=lambda s: s.last_used))
                    continue
                await self._changed.wait()

    def sweep(self) -> None:
        """Close every session no call used for ``idle_timeout`` seconds."""
        now = self.clock()
        for session in list(self.sessions.values()):
            if not session.busy and now - session.last_used > self.idle_timeout:
                self._close(session)

    def _close(self, session: BackendSession) -> None:
        del self.sessions[session.owner]
        if session.client is not None:
            closing = asyncio.ensure_future(session.client.close())
            self._closing.add(closing)
            closing.add_done_callback(self._closing.discard)

    async def sweeping(self) -> None:
        """Sweep now and then, for as long as the proxy runs."""
        while True:
            await asyncio.sleep(max(self.idle_timeout / 4, 0.05))
            self.sweep()

    async def close(self) -> None:
        """Close every session (the proxy stops); the proxy closes its own client."""
        for session in list(self.sessions.values()):
            self._close(session)
        for closing in list(self._closing):
            with contextlib.suppress(BaseException):
                await closing
