"""Legacy Streamable HTTP (the legacy basic/transports.mdx): sessions on one endpoint.

``initialize`` opens a session: the answer carries ``Mcp-Session-Id``, and every later
request of that client names it. A request naming a session this process does not
know (never made, ended by DELETE, expired, or made for another principal) gets 404,
and the client starts again with initialize. A request without a session that is not
modern either (no ``_meta`` protocol version) gets 400 with -32600, never the modern
"header is required": a legacy client cannot fix that by adding a header.

Per POST: a request is answered with JSON, or with an SSE stream as soon as anything
must go to the client before the answer (progress, log messages, the bridge's
requests); notifications and the client's responses get 202. GET opens the session's
one stream for messages unrelated to a request (list changes, resource updates);
DELETE ends the session. A disconnect is not a cancellation (legacy clients send
``notifications/cancelled``), which cancels the named request of that session, on
whichever worker runs it.

Where sessions live is ``LegacyLimits.store``. By default, in this process: behind a
load balancer, route by ``Mcp-Session-Id`` (session affinity). With a shared store
(``redis://``, ``snodo.legacy.store``) any worker answers any session: it loads the
session's record, keeps a local view of it (its requests in flight, the questions it
sent the client, its GET stream), and hands the client's answers to another worker's
questions to that worker (``snodo.legacy.relay``). A store that does not answer is 503
with a JSON-RPC error. ``LegacyLimits(stateless=True)`` keeps no session at all
(``snodo.legacy.stateless``). Bounded by ``LegacyLimits``: sessions (503 beyond), idle
expiry, pending server-to-client requests per session.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from snodo.core import jsonrpc
from snodo.core.envelope import is_modern
from snodo.core.errors import InvalidRequest
from snodo.legacy.events import EventLog, MemoryEventLog, RedisEventLog, parse_event_id
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.owners import Owners, owner_of
from snodo.legacy.post import Post, resume
from snodo.legacy.replies import (
    END,
    Receive,
    Send,
    empty,
    json_body,
    json_reply,
    no_session_error,
    not_found,
    plain,
    sse_event,
    sse_prime,
    sse_retry,
    sse_start,
    unavailable,
    wait_disconnect,
)
from snodo.legacy.session import LegacySession
from snodo.legacy.shared import Entry, SharedSessions
from snodo.legacy.stateless import Stateless
from snodo.legacy.store import StoreUnavailable, session_store
from snodo.legacy.wire import batch_refusal, is_initialize
from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits

__all__ = ["SESSION_HEADER", "LegacyHttp", "no_session_error"]

SESSION_HEADER = "mcp-session-id"
KEEPALIVE_SECONDS = 15.0
RETRY_MS = 1000
"""What a GET stream ended by a shutdown tells the client to wait before reconnecting."""
STOPPING = "the server is shutting down"
"""Why a question still waiting for its answer when a shutdown begins ends unanswered."""


class LegacyHttp:
    """The legacy sessions of one ``HttpApp``, and the requests that name them."""

    def __init__(
        self, server: Server, limits: LegacyLimits, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.kernel = LegacyKernel(server)
        self.server = server
        self.limits = limits
        self.clock = clock
        self.sessions: dict[str, Entry] = {}
        """This worker's sessions; with a shared store, its views of them."""
        store = None if limits.store is None else session_store(limits.store)
        self.shared = None if store is None else SharedSessions(store, server, self)
        self.memory_log = MemoryEventLog(limits.max_stream_events)
        self.events: EventLog = self.memory_log
        """The SSE streams' events, for a client that resumes one (``Last-Event-ID``)."""
        if store is not None:
            self.events = RedisEventLog(store, limits.max_stream_events, limits.idle_timeout)
        self.stateless = Stateless(self.kernel, limits) if limits.stateless else None
        self.running = 0  # legacy requests being handled, each batch member counted
        self.owners = Owners(limits.max_sessions_per_principal)
        self.stopping = False
        """A shutdown has begun (``end_rounds``): no session asks its client anything more."""

    async def start(self) -> None:
        """Serving begins: with a shared store, join the other workers' relay."""
        if self.shared is not None:
            await self.shared.start()

    async def stop(self) -> None:
        if self.shared is not None:
            await self.shared.stop()

    # -- routing ---------------------------------------------------------------------

    def claims(self, message: Any, headers: Mapping[str, str]) -> bool:
        """Whether a POST belongs to the legacy era: initialize, or a session's message
        (stateless: any message without the modern ``_meta``)."""
        if is_initialize(message):
            return True
        if self.stateless is not None:
            return not is_modern(message)
        return SESSION_HEADER in headers and not is_modern(message)

    @staticmethod
    def sessionless(message: Any, headers: Mapping[str, str]) -> bool:
        """A request with neither a session nor anything modern about it."""
        return (
            isinstance(message, dict)
            and "id" in message
            and isinstance(message.get("method"), str)
            and "mcp-protocol-version" not in headers
            and not is_modern(message)
        )

    # -- sessions ----------------------------------------------------------------------

    def _sweep(self) -> None:
        now = self.clock()
        for key, entry in list(self.sessions.items()):
            idle = not entry.busy and not entry.streaming
            if idle and now - entry.last_seen > self.limits.idle_timeout:
                self._end(key)

    def _end(self, key: str) -> None:
        entry = self.sessions.pop(key, None)
        self.memory_log.forget(key)
        if entry is not None:
            self.owners.forget(entry.owner, key)
            if entry.streaming:
                entry.session.notify(END)  # its GET stream ends now, not at the next event
            entry.session.close()
            for task in entry.tasks.values():
                task.cancel()

    def _answering(
        self, message: Any, headers: Mapping[str, str], principal: str | None
    ) -> Entry | None:
        """With a shared store, the view that waits for this answer of the client, if
        this worker holds it: no store read for it (the call it answers renewed the
        session; a DELETE elsewhere would have ended the view)."""
        if self.shared is None or not isinstance(message, dict) or "method" in message:
            return None
        entry = self.sessions.get(headers.get(SESSION_HEADER, ""))
        if entry is None or entry.session.principal != principal or not entry.session.pending:
            return None
        return entry

    async def _find(self, headers: Mapping[str, str], principal: str | None) -> Entry | None:
        """The session the request names, if it is this principal's; with a shared
        store, loaded from it (``StoreUnavailable`` when it does not answer)."""
        key = headers.get(SESSION_HEADER, "")
        if self.shared is not None:
            return await self.shared.find(key, principal)
        entry = self.sessions.get(key)
        if entry is None or entry.session.principal != principal:
            return None
        idle = not entry.busy and not entry.streaming
        if idle and self.clock() - entry.last_seen > self.limits.idle_timeout:
            self._end(key)
            return None
        entry.last_seen = self.clock()
        return entry

    # -- ASGI --------------------------------------------------------------------------

    async def post(
        self,
        message: Any,
        headers: Mapping[str, str],
        principal: str | None,
        send: Send,
        scopes: frozenset[str] | None = None,
        address: str | None = None,
    ) -> None:
        """One POST of a session; ``scopes``: OAuth's grant; ``address``: the client's."""
        if self.stateless is not None:
            await self.stateless.post(message, headers, principal, send, scopes)
            return
        if is_initialize(message):
            await self._initialize(message, headers, principal, send, owner_of(principal, address))
            return
        try:
            entry = self._answering(message, headers, principal) or await self._find(
                headers, principal
            )
        except StoreUnavailable as exc:
            await unavailable(send, str(exc))
            return
        if entry is None:
            await not_found(send)
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version.strip() not in self.server.legacy_versions:
            # Legacy basic/transports.mdx: a version this server does not offer is 400.
            error = InvalidRequest(f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
            await json_reply(send, 400, jsonrpc.error_response(None, error))
            return
        session = entry.session
        if self.stopping:
            session.end_rounds(STOPPING)  # a view loaded, or a session made, since then
        if isinstance(message, list):
            await self._batch(entry, message, principal, send, scopes)
            return
        if not isinstance(message, dict) or "method" not in message:
            if self.shared is None or not self.shared.relayed(session, message):
                await self.kernel.handle(session, message, emit=session.notify)
            await empty(send, 202)
            return
        if "id" not in message:
            if message.get("method") == "notifications/cancelled":
                params = message.get("params")
                request_id = params.get("requestId") if isinstance(params, dict) else None
                with contextlib.suppress(TypeError):  # an unhashable id names no request
                    task = entry.tasks.get(request_id)
                    if task is not None:
                        task.cancel()
                    elif self.shared is not None:  # perhaps running on another worker
                        self.shared.cancel(session.id, request_id)
            await empty(send, 202)
            return
        if "text/event-stream" not in headers.get("accept", ""):
            await plain(send, 406, b"accept both application/json and text/event-stream")
            return
        if self.running >= self.limits.max_running:
            await unavailable(send, "too many legacy requests in flight; try again later")
            return
        entry.busy += 1
        self.running += 1
        try:
            post = Post(self.kernel, entry, message, principal, send, scopes)
            post.changed = None if self.shared is None else self.shared.changed
            post.log = self.events
            await post.run()
        finally:
            self.running -= 1
            entry.busy -= 1
            entry.last_seen = self.clock()

    async def _batch(
        self,
        entry: Entry,
        batch: list[Any],
        principal: str | None,
        send: Send,
        scopes: frozenset[str] | None,
    ) -> None:
        """A JSON array. The oldest revision served has batches (``LEGACY.batch_versions``):
        every member is handled, and the requests' responses come back as one JSON array
        (202 when there are none); later revisions removed them, so there the whole array
        is -32600, as is one over ``max_batch``. Notifications and server-to-client
        requests a member causes go to the session's GET stream."""
        session = entry.session
        wrong = batch_refusal(len(batch), session.version, self.limits.max_batch)
        if wrong is not None:
            refused = InvalidRequest(f"Invalid Request: {wrong}")
            await json_reply(send, 400, jsonrpc.error_response(None, refused))
            return
        if self.running + len(batch) > self.limits.max_running:
            await unavailable(send, "too many legacy requests in flight; try again later")
            return
        entry.busy += 1
        self.running += len(batch)
        try:
            replies = await asyncio.gather(
                *(
                    self.kernel.handle(
                        session,
                        member,
                        principal=principal,
                        transport="http",
                        emit=session.notify,
                        scopes=scopes,
                    )
                    for member in batch
                )
            )
        finally:
            self.running -= len(batch)
            entry.busy -= 1
            entry.last_seen = self.clock()
        responses = [reply.response for reply in replies if reply.response is not None]
        if not responses:
            await empty(send, 202)
            return
        await json_body(send, 200, b"[" + b",".join(jsonrpc.encode(r) for r in responses) + b"]")

    async def _initialize(
        self,
        message: Any,
        headers: Mapping[str, str],
        principal: str | None,
        send: Send,
        owner: str,
    ) -> None:
        self._sweep()
        # With a shared store the owner's sessions are counted there (``shared.create``).
        if self.shared is None and not self.owners.make_room(owner, self.sessions, self._end):
            await plain(send, 503, b"too many sessions of this client", ((b"retry-after", b"5"),))
            return
        if self.shared is None and len(self.sessions) >= self.limits.max_sessions:
            await plain(send, 503, b"too many sessions", ((b"retry-after", b"5"),))
            return
        origin = None if self.shared is None else self.shared.relay.origin
        session = LegacySession(self.limits, principal=principal, id_prefix=origin)
        reply = await self.kernel.handle(session, message, transport="http", emit=session.notify)
        response = reply.response or {}
        if "result" not in response:
            session.close()
            await json_reply(send, 400, response)
            return
        if self.shared is not None:
            try:
                kept = await self.shared.create(session, owner)
            except StoreUnavailable as exc:
                session.close()
                await unavailable(send, str(exc))
                return
            if not kept:
                session.close()
                await plain(send, 503, b"too many sessions", ((b"retry-after", b"5"),))
                return
        self.sessions[session.id] = Entry(session, self.clock(), owner=owner)
        if self.shared is None:
            self.owners.add(owner, session.id)
        extra = ((SESSION_HEADER.encode(), session.id.encode()),)
        await json_reply(send, 200, response, extra)

    async def get(
        self, headers: Mapping[str, str], principal: str | None, receive: Receive, send: Send
    ) -> None:
        """The session's stream for messages unrelated to any request."""
        if self.stateless is not None:
            await plain(send, 405, b"this server keeps no legacy sessions: no stream")
            return
        if SESSION_HEADER not in headers:
            await plain(send, 400, b"Mcp-Session-Id header is required")
            return
        try:
            entry = await self._find(headers, principal)
        except StoreUnavailable as exc:
            await unavailable(send, str(exc))
            return
        if entry is None:
            await not_found(send)
            return
        if "text/event-stream" not in headers.get("accept", ""):
            await plain(send, 406, b"accept text/event-stream")
            return
        backlog: list[tuple[str, dict[str, Any]]] = []
        resumed = headers.get("last-event-id")
        if resumed is not None:
            where = parse_event_id(resumed)
            if where is None:
                await plain(send, 400, b"Last-Event-ID names no event of this server")
                return
            if where[0].startswith("p"):  # a POST's stream: its missed events, its answer
                await resume(self.events, entry.session.id, where, receive, send)
                return
            try:
                replay = self.events.replay(entry.session.id, *where, follow=False)
                backlog = [(f"{where[0]}.{seq}", note) async for seq, note in replay if note]
            except (LookupError, StoreUnavailable):
                pass  # what was missed is gone; the stream goes on from now
        if entry.streaming:
            await plain(send, 409, b"this session already has a stream open")
            return
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=256)
        stream, seq = "g" + secrets.token_urlsafe(9), 0

        def notify(note: dict[str, Any]) -> None:
            with contextlib.suppress(asyncio.QueueFull):  # a stalled reader loses notes
                queue.put_nowait(note)

        entry.streaming = True
        entry.session.notify = notify
        await sse_start(send)
        for event_id, note in backlog:
            await sse_event(send, note, event_id)
        await self._log(entry.session.id, stream, 0, {})
        await sse_prime(send, f"{stream}.0")
        watcher = asyncio.ensure_future(wait_disconnect(receive))
        try:
            while not watcher.done() and not entry.session.closed:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait(
                    {getter, watcher}, timeout=KEEPALIVE_SECONDS, return_when="FIRST_COMPLETED"
                )
                if getter in done:
                    note = getter.result()
                    if note is END:  # a shutdown (the session stays: the client comes back)
                        await sse_retry(send, RETRY_MS)  # or the session ended
                        break
                    seq += 1
                    await self._log(entry.session.id, stream, seq, note)
                    await sse_event(send, note, f"{stream}.{seq}")
                else:
                    getter.cancel()
                    if not done:
                        await send(
                            {"type": "http.response.body", "body": b":\n\n", "more_body": True}
                        )
        finally:
            watcher.cancel()
            entry.streaming = False
            entry.last_seen = self.clock()
            if entry.session.notify is notify:
                entry.session.notify = _drop
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _log(self, session: str, stream: str, seq: int, note: dict[str, Any]) -> None:
        with contextlib.suppress(StoreUnavailable):
            await self.events.append(session, stream, seq, note)

    async def delete(self, headers: Mapping[str, str], principal: str | None, send: Send) -> None:
        if self.stateless is not None:
            await plain(send, 405, b"this server keeps no legacy sessions")
            return
        if SESSION_HEADER not in headers:
            await plain(send, 400, b"Mcp-Session-Id header is required")
            return
        try:
            entry = await self._find(headers, principal)
            if entry is not None and self.shared is not None:
                await self.shared.delete(entry.session.id)
        except StoreUnavailable as exc:
            await unavailable(send, str(exc))
            return
        if entry is None:
            await not_found(send)
            return
        self._end(entry.session.id)
        await empty(send, 200)

    def end_streams(self) -> None:
        """End every session's GET stream (a shutdown has begun): the ASGI server waits
        for open connections before it stops, and these never close by themselves."""
        for entry in self.sessions.values():
            if entry.streaming:
                entry.session.notify(END)

    def end_rounds(self) -> None:
        """A shutdown has begun: every bridged round waiting for a client's answer ends
        now (its call is answered with the refusal), and none starts. A client that
        vanished mid-question would otherwise hold the process for ``round_timeout``."""
        self.stopping = True
        for entry in self.sessions.values():
            entry.session.end_rounds(STOPPING)

    def close(self) -> None:
        for key in list(self.sessions):
            self._end(key)


def _drop(_: dict[str, Any]) -> None:
    return None
