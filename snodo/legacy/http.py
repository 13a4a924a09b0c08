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
``notifications/cancelled``), which cancels the named request of that session.

Sessions live in this process only: behind a load balancer, route by
``Mcp-Session-Id`` (session affinity). Bounded by ``LegacyLimits``: sessions per
process (503 beyond), idle expiry, pending server-to-client requests per session.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from snodo import jsonrpc
from snodo.errors import InvalidRequest, McpError
from snodo.legacy.kernel import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.legacy.wire import VERSIONS, is_initialize
from snodo.server import Server
from snodo.server.eras import is_modern
from snodo.server.legacy_limits import LegacyLimits
from snodo_wire_2025_11_25.protocol import BATCH_VERSIONS

__all__ = ["SESSION_HEADER", "LegacyHttp"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SESSION_HEADER = "mcp-session-id"
KEEPALIVE_SECONDS = 15.0


class SessionNotFound(McpError):
    """The body of a 404 for a session this process does not know."""

    code = -32001  # what the official SDKs send there
    default_message = "Session not found: send initialize to start a new session"


@dataclass(eq=False, slots=True)
class _Entry:
    session: LegacySession
    last_seen: float
    busy: int = 0
    streaming: bool = False
    tasks: dict[Any, asyncio.Task[Any]] = field(default_factory=dict)


class LegacyHttp:
    """The legacy sessions of one ``HttpApp``, and the requests that name them."""

    def __init__(
        self, server: Server, limits: LegacyLimits, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.kernel = LegacyKernel(server)
        self.limits = limits
        self.clock = clock
        self.sessions: dict[str, _Entry] = {}

    # -- routing ---------------------------------------------------------------------

    @staticmethod
    def claims(message: Any, headers: Mapping[str, str]) -> bool:
        """Whether a POST belongs to the legacy era: initialize, or a session's message."""
        if is_initialize(message):
            return True
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
        if entry is not None:
            entry.session.close()
            for task in entry.tasks.values():
                task.cancel()

    def _find(self, headers: Mapping[str, str], principal: str | None) -> _Entry | None:
        key = headers.get(SESSION_HEADER, "")
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
    ) -> None:
        """One POST of a session; ``scopes`` are what OAuth granted (snodo.auth)."""
        if is_initialize(message):
            await self._initialize(message, headers, principal, send)
            return
        entry = self._find(headers, principal)
        if entry is None:
            await _not_found(send)
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version.strip() not in VERSIONS:
            # The legacy basic/transports.mdx: an invalid or unsupported version is 400.
            error = InvalidRequest(f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
            await _json(send, 400, jsonrpc.error_response(None, error))
            return
        session = entry.session
        if isinstance(message, list):
            await self._batch(entry, message, principal, send, scopes)
            return
        if not isinstance(message, dict) or "method" not in message:
            await self.kernel.handle(session, message, emit=session.notify)
            await _empty(send, 202)
            return
        if "id" not in message:
            if message.get("method") == "notifications/cancelled":
                params = message.get("params")
                task = entry.tasks.get(
                    params.get("requestId") if isinstance(params, dict) else None
                )
                if task is not None:
                    task.cancel()
            await _empty(send, 202)
            return
        if "text/event-stream" not in headers.get("accept", ""):
            await _plain(send, 406, b"accept both application/json and text/event-stream")
            return
        entry.busy += 1
        try:
            await _Answer(self.kernel, entry, message, principal, send, scopes).run()
        finally:
            entry.busy -= 1
            entry.last_seen = self.clock()

    async def _batch(
        self,
        entry: _Entry,
        batch: list[Any],
        principal: str | None,
        send: Send,
        scopes: frozenset[str] | None,
    ) -> None:
        """A JSON array. The oldest revision served has batches (``BATCH_VERSIONS``):
        every member is handled, and the requests' responses come back as one JSON array
        (202 when there are none); later revisions removed them, so there the whole array
        is -32600. Notifications and
        server-to-client requests a member causes go to the session's GET stream."""
        session = entry.session
        if session.version not in BATCH_VERSIONS:
            refused = InvalidRequest(
                f"Invalid Request: protocol version {session.version} has no batches"
            )
            await _json(send, 400, jsonrpc.error_response(None, refused))
            return
        if not batch:
            refused = InvalidRequest("Invalid Request: an empty batch")
            await _json(send, 400, jsonrpc.error_response(None, refused))
            return
        entry.busy += 1
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
            entry.busy -= 1
            entry.last_seen = self.clock()
        responses = [reply.response for reply in replies if reply.response is not None]
        if not responses:
            await _empty(send, 202)
            return
        await _json_body(send, 200, b"[" + b",".join(jsonrpc.encode(r) for r in responses) + b"]")

    async def _initialize(
        self, message: Any, headers: Mapping[str, str], principal: str | None, send: Send
    ) -> None:
        self._sweep()
        if len(self.sessions) >= self.limits.max_sessions:
            await _plain(send, 503, b"too many sessions", ((b"retry-after", b"5"),))
            return
        session = LegacySession(self.limits, principal=principal)
        reply = await self.kernel.handle(session, message, transport="http", emit=session.notify)
        response = reply.response or {}
        if "result" not in response:
            session.close()
            await _json(send, 400, response)
            return
        self.sessions[session.id] = _Entry(session, self.clock())
        extra = ((SESSION_HEADER.encode(), session.id.encode()),)
        await _json(send, 200, response, extra)

    async def get(
        self, headers: Mapping[str, str], principal: str | None, receive: Receive, send: Send
    ) -> None:
        """The session's stream for messages unrelated to any request."""
        if SESSION_HEADER not in headers:
            await _plain(send, 400, b"Mcp-Session-Id header is required")
            return
        entry = self._find(headers, principal)
        if entry is None:
            await _not_found(send)
            return
        if "text/event-stream" not in headers.get("accept", ""):
            await _plain(send, 406, b"accept text/event-stream")
            return
        if entry.streaming:
            await _plain(send, 409, b"this session already has a stream open")
            return
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=256)

        def notify(note: dict[str, Any]) -> None:
            with contextlib.suppress(asyncio.QueueFull):  # a stalled reader loses notes
                queue.put_nowait(note)

        entry.streaming = True
        entry.session.notify = notify
        await _sse_start(send)
        watcher = asyncio.ensure_future(_wait_disconnect(receive))
        try:
            while not watcher.done() and not entry.session.closed:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait(
                    {getter, watcher}, timeout=KEEPALIVE_SECONDS, return_when="FIRST_COMPLETED"
                )
                if getter in done:
                    note = getter.result()
                    if note is _END:
                        break  # the server is stopping: the stream ends, the session stays
                    await _sse_event(send, note)
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

    async def delete(self, headers: Mapping[str, str], principal: str | None, send: Send) -> None:
        if SESSION_HEADER not in headers:
            await _plain(send, 400, b"Mcp-Session-Id header is required")
            return
        entry = self._find(headers, principal)
        if entry is None:
            await _not_found(send)
            return
        self._end(entry.session.id)
        await _empty(send, 200)

    def end_streams(self) -> None:
        """End every session's GET stream (a shutdown has begun): the ASGI server waits
        for open connections before it stops, and these never close by themselves."""
        for entry in self.sessions.values():
            if entry.streaming:
                entry.session.notify(_END)

    def close(self) -> None:
        for key in list(self.sessions):
            self._end(key)


class _Answer:
    """One legacy request over POST: JSON, or SSE once something goes out before it."""

    def __init__(
        self,
        kernel: LegacyKernel,
        entry: _Entry,
        message: Any,
        principal: str | None,
        send: Send,
        scopes: frozenset[str] | None = None,
    ) -> None:
        self.kernel = kernel
        self.scopes = scopes
        self.entry = entry
        self.message = message
        self.principal = principal
        self.send = send
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.sender: asyncio.Task[None] | None = None

    def _emit(self, note: dict[str, Any]) -> None:
        self.queue.put_nowait(note)
        if self.sender is None:
            self.sender = asyncio.ensure_future(self._stream())

    async def _stream(self) -> None:
        await _sse_start(self.send)
        while (note := await self.queue.get()) is not None:
            await _sse_event(self.send, note)

    async def run(self) -> None:
        request_id = self.message.get("id")
        task = asyncio.ensure_future(
            self.kernel.handle(
                self.entry.session,
                self.message,
                principal=self.principal,
                transport="http",
                emit=self._emit,
                scopes=self.scopes,
            )
        )
        self.entry.tasks[request_id] = task
        try:
            reply = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the server is going away, not the client cancelling
            reply = None  # cancelled by the client: no answer is sent (basic/utilities)
        finally:
            if self.entry.tasks.get(request_id) is task:
                del self.entry.tasks[request_id]
        response = reply.response if reply is not None else None
        if self.sender is not None:
            self.queue.put_nowait(None)
            await self.sender
            if response is not None:
                await _sse_event(self.send, response)
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        elif response is not None:
            await _json(self.send, 200, response)
        else:
            await _empty(self.send, 202)


_END: dict[str, Any] = {}
"""Put on a GET stream's queue to end it."""


def _drop(_: dict[str, Any]) -> None:
    return None


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _sse_start(send: Send) -> None:
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"", "more_body": True})


async def _sse_event(send: Send, message: dict[str, Any]) -> None:
    body = b"event: message\ndata: " + jsonrpc.encode(message) + b"\n\n"
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def _json(
    send: Send,
    status: int,
    message: dict[str, Any],
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    await _json_body(send, status, jsonrpc.encode(message), extra)


async def _json_body(
    send: Send, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + list(extra)})
    await send({"type": "http.response.body", "body": body})


async def _plain(
    send: Send, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _empty(send: Send, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def _not_found(send: Send) -> None:
    await _json(send, 404, jsonrpc.error_response(None, SessionNotFound()))


def no_session_error() -> dict[str, Any]:
    """The 400 body for a sessionless legacy request."""
    error = InvalidRequest("Bad Request: no Mcp-Session-Id; send initialize to start a session")
    return jsonrpc.error_response(None, error)
