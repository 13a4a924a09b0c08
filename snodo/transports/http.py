"""Streamable HTTP of the current revision as a plain ASGI application.

POST only, no sessions. Each POST carries one JSON-RPC message and gets one answer:
``application/json``, or ``text/event-stream`` when the request emits notifications
(progress, log messages) before its result, or opens a subscriptions/listen stream.
The answer is JSON unless a notification actually happens, so a plain call costs no
SSE framing.

The header layer checks what only HTTP carries (the number of header lines, Host and
Origin against DNS rebinding, method, content type, Accept, body size, authentication,
the mirrored headers) before the core sees the body, in the order
docs/request-checks.md gives.

With OAuth (``Server(authorization=...)``, ``snodo.auth``) it also serves the resource
metadata, and answers 403 when the core refuses an item for its scopes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from snodo import jsonrpc
from snodo.auth.protected import Answer, ProtectedResource, Refused
from snodo.errors import (
    ErrorCode,
    HeaderMismatch,
    McpError,
    ParseError,
    UnsupportedProtocolVersion,
)
from snodo.http_headers import check_headers, host_name
from snodo.legacy.http import SESSION_HEADER, LegacyHttp, no_session_error
from snodo.legacy.wire import ASSUMED_VERSION, is_initialize
from snodo.server import Server, required_meta
from snodo.transports.lifespan import lifespan

__all__ = ["HttpApp", "Unauthorized"]

log = logging.getLogger("snodo.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

STATUS: dict[int, int] = {
    ErrorCode.PARSE_ERROR: 400,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
    ErrorCode.METHOD_NOT_FOUND: 404,
}
"""HTTP status per JSON-RPC error; anything else is 200 with the error in the body."""

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
MAX_HEADER_LINES = 100
"""Header lines a request may carry (answered 431 beyond). Browsers and proxies send a
few dozen; counting is the only work done before refusing."""
KEEPALIVE_SECONDS = 15.0
WATCH_AFTER = 0.05
"""Seconds a request may run before a task starts watching for the client leaving."""


class Unauthorized(Exception):
    """Raised by an authentication hook: answered with 401 and ``WWW-Authenticate``."""

    def __init__(self, www_authenticate: str = "Bearer") -> None:
        super().__init__("unauthorized")
        self.www_authenticate = www_authenticate


Authenticate = Callable[[Mapping[str, str]], Awaitable[str | None] | str | None]
"""Turns request headers (lower-case names) into a principal, or raises Unauthorized."""


@dataclass(frozen=True, slots=True)
class _Plain:
    status: int
    body: bytes = b""
    content_type: bytes = b"text/plain; charset=utf-8"
    extra: tuple[tuple[bytes, bytes], ...] = ()


def _headers(scope: Scope) -> dict[str, str]:
    """Lower-case names; a repeated header's values joined with ", " (RFC 9110 5.3), so a
    mirrored header sent twice never matches the body. Values are collected in lists and
    joined once: linear in the number of lines."""
    collected: dict[str, list[str]] = {}
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1").lower()
        collected.setdefault(name, []).append(raw_value.decode("latin-1"))
    return {name: ", ".join(values) for name, values in collected.items()}


class HttpApp:
    """An ASGI app serving one ``Server`` at ``path`` (every path when None)."""

    def __init__(
        self,
        server: Server,
        *,
        path: str | None = "/mcp",
        allowed_hosts: Iterable[str] | None = LOCAL_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_header_lines: int = MAX_HEADER_LINES,
        authenticate: Authenticate | None = None,
        authorization: ProtectedResource | None = None,
    ) -> None:
        self.server = server
        self.path = path
        self.allowed_hosts = (
            None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)
        )
        self.allowed_origins = None if allowed_origins is None else frozenset(allowed_origins)
        self.max_body_bytes = max_body_bytes
        self.max_header_lines = max_header_lines
        self.authenticate = authenticate
        # Dual-era unless the server is modern-only: initialize-based sessions beside
        # the stateless path (snodo.legacy.http).
        self.legacy = None if server.legacy is None else LegacyHttp(server, server.legacy)
        # OAuth: given here, or configured on the server (what ``snodo run`` serves).
        self.authorization = server.authorization if authorization is None else authorization
        if self.authorization is not None and authenticate is not None:
            raise ValueError("pass authenticate= or an OAuth authorization, not both")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send, self.server.startup, self.server.shutdown)
            if self.legacy is not None:
                self.legacy.close()
            return
        if scope["type"] != "http":
            return
        if len(scope["headers"]) > self.max_header_lines:
            await _send_plain(send, _Plain(431, b"too many header lines"))
            return
        headers = _headers(scope)
        if self.authorization is not None and scope["path"] in self.authorization.metadata_paths:
            # Public, but still only under an allowed Host.
            host = host_name(headers.get("host", ""))
            if self.allowed_hosts is not None and host not in self.allowed_hosts:
                await _send_plain(send, _Plain(421, b"misdirected request: host not allowed"))
            else:
                await _send_plain(
                    send, _answered(self.authorization.metadata_answer(scope["method"]))
                )
            return
        refusal = self._refuse(scope, headers)
        if refusal is not None:
            await _send_plain(send, refusal)
            return
        principal = None
        scopes: frozenset[str] | None = None
        if self.authorization is not None:
            # Before the body is read: a caller without a good token costs no buffering.
            try:
                authorized = await self.authorization.authorize(headers)
            except Refused as refused:
                await _send_plain(send, _answered(refused.answer))
                return
            principal, scopes = authorized.principal, authorized.scopes
        body = b"" if scope["method"] != "POST" else await self._body(receive, headers)
        if isinstance(body, _Plain):
            await _send_plain(send, body)
            return
        if self.authenticate is not None:
            try:
                found = self.authenticate(headers)
                principal = await found if isinstance(found, Awaitable) else found
            except Unauthorized as exc:
                await _send_plain(
                    send,
                    _Plain(
                        401,
                        b"unauthorized",
                        extra=((b"www-authenticate", exc.www_authenticate.encode()),),
                    ),
                )
                return
        if self.legacy is not None and scope["method"] == "GET":  # with a session id
            await self.legacy.get(headers, principal, receive, send)
        elif self.legacy is not None and scope["method"] == "DELETE":
            await self.legacy.delete(headers, principal, send)
        else:
            await self._exchange(body, headers, principal, scopes, receive, send)

    def _refuse(self, scope: Scope, headers: Mapping[str, str]) -> _Plain | None:
        if self.path is not None and scope["path"].rstrip("/") != self.path.rstrip("/"):
            return _Plain(404, b"not found")
        host = host_name(headers.get("host", ""))
        if self.allowed_hosts is not None and (host is None or host not in self.allowed_hosts):
            return _Plain(421, b"misdirected request: host not allowed")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return _Plain(403, b"forbidden: origin not allowed")
        legacy = self.legacy is not None and SESSION_HEADER in headers
        if legacy and scope["method"] in ("GET", "DELETE"):
            return None  # a legacy session's stream, or its end
        if scope["method"] != "POST":
            return _Plain(405, b"method not allowed", extra=((b"allow", b"POST"),))
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return _Plain(415, b"content type must be application/json")
        accept = headers.get("accept", "*/*")
        if not any(t in accept for t in ("application/json", "text/event-stream", "*/*")):
            return _Plain(406, b"accept application/json or text/event-stream")
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body_bytes:
            return _Plain(413, b"request body too large")
        return None

    def _origin_allowed(self, origin: str) -> bool:
        if self.allowed_origins is not None:
            return origin in self.allowed_origins
        if self.allowed_hosts is None:
            return True
        scheme, _, authority = origin.partition("://")
        host = host_name(authority)
        return scheme in ("http", "https") and host is not None and host in self.allowed_hosts

    async def _body(self, receive: Receive, headers: Mapping[str, str]) -> bytes | _Plain:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return _Plain(400, b"client went away")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return _Plain(413, b"request body too large")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _preflight(self, message: Any, headers: Mapping[str, str]) -> None:
        """The header checks that need the body, before the core sees it."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return  # the core answers envelope errors
        if "id" not in message:
            return  # notifications: header rules are not defined by this revision
        header_version = headers.get("mcp-protocol-version")
        if header_version is None:
            raise HeaderMismatch("Header mismatch: MCP-Protocol-Version header is required")
        params = message.get("params")
        _, version, _ = required_meta(params)
        if header_version.strip() != version:
            raise HeaderMismatch(
                "Header mismatch: MCP-Protocol-Version does not match the body's protocolVersion"
            )
        self.server.check_version(version)
        assert isinstance(params, dict)
        mirrored: tuple[tuple[tuple[str, ...], str], ...] = ()
        if message["method"] == "tools/call":
            mirrored = self.server.mirrored_headers(str(params.get("name")))
        check_headers(headers, message["method"], params, mirrored)

    async def _exchange(
        self,
        body: bytes,
        headers: Mapping[str, str],
        principal: str | None,
        scopes: frozenset[str] | None,
        receive: Receive,
        send: Send,
    ) -> None:
        try:
            message = jsonrpc.decode(body)
        except ParseError as exc:
            await _send_json(send, 400, jsonrpc.error_response(None, exc))
            return
        if self.legacy is not None and self.legacy.claims(message, headers):
            await self.legacy.post(message, headers, principal, send, scopes)
            return
        if is_initialize(message) or LegacyHttp.sessionless(message, headers):
            # An initialize-based client, which a header cannot help (basic/versioning.mdx):
            # a modern-only server names its versions, a dual-era one asks for a session.
            raw_id = message.get("id")
            if self.legacy is not None:
                response = no_session_error()
            else:
                params = message.get("params")
                asked = params.get("protocolVersion") if isinstance(params, dict) else None
                # The legacy transport: no version header and no session, assume the oldest.
                refusal = UnsupportedProtocolVersion(
                    asked
                    if isinstance(asked, str)
                    else headers.get("mcp-protocol-version", ASSUMED_VERSION),
                    list(self.server.supported_versions),
                )
                readable = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
                response = jsonrpc.error_response(raw_id if readable else None, refusal)
            await _send_json(send, 400, response)
            return
        try:
            self._preflight(message, headers)
        except McpError as exc:
            raw_id = message.get("id") if isinstance(message, dict) else None
            readable = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
            response = jsonrpc.error_response(raw_id if readable else None, exc)
            await _send_json(send, STATUS.get(exc.code, 200), response)
            return
        streams = "text/event-stream" in headers.get("accept", "")
        if (
            not streams
            and isinstance(message, dict)
            and message.get("method") == "subscriptions/listen"
        ):
            await _send_plain(send, _Plain(406, b"subscriptions/listen needs text/event-stream"))
            return
        exchange = _Exchange(self.server, message, headers, principal, streams, receive, send)
        await exchange.authorized(scopes, self.authorization).run()


class _Exchange:
    """One POST: run the request, answering JSON, or SSE once a notification appears.

    The handler runs in the ASGI task itself. Only a request still running after
    WATCH_AFTER seconds gets a task watching for the client going away (which cancels
    it), and only a request that emits a notification gets a task streaming events: a
    plain call costs neither.
    """

    def __init__(
        self,
        server: Server,
        message: Any,
        headers: Mapping[str, str],
        principal: str | None,
        streams: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        self.server = server
        self.message = message
        self.headers = headers
        self.principal = principal
        self.scopes: frozenset[str] | None = None
        self.authorization: ProtectedResource | None = None
        self.streams = streams
        self.receive = receive
        self.send = send
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.sender: asyncio.Task[None] | None = None
        self.watcher: asyncio.Task[None] | None = None
        self.disconnected = False
        self.started = False
        self.lock = asyncio.Lock()

    def authorized(
        self, scopes: frozenset[str] | None, authorization: ProtectedResource | None
    ) -> _Exchange:
        """With OAuth: the granted scopes, and what answers an insufficient scope."""
        self.scopes, self.authorization = scopes, authorization
        return self

    def _emit(self, note: dict[str, Any]) -> None:
        if not self.streams:
            return  # the client takes JSON only: request-scoped notifications are dropped
        self.queue.put_nowait(note)
        if self.sender is None:
            self.sender = asyncio.ensure_future(self._stream_events())

    async def _stream_events(self) -> None:
        while (note := await self.queue.get()) is not None:
            await self._event(note)

    async def _watch(self, task: asyncio.Task[Any]) -> None:
        await _wait_disconnect(self.receive)
        self.disconnected = True
        task.cancel()

    def _start_watching(self, task: asyncio.Task[Any]) -> None:
        if self.watcher is None:
            self.watcher = asyncio.ensure_future(self._watch(task))

    async def run(self) -> None:
        task = asyncio.current_task()
        assert task is not None
        timer = asyncio.get_running_loop().call_later(WATCH_AFTER, self._start_watching, task)
        try:
            reply = await self.server.handle(
                self.message,
                principal=self.principal,
                scopes=self.scopes,
                transport="http",
                headers=self.headers,
                emit=self._emit,
            )
            timer.cancel()
            if reply.subscription is not None:
                self._start_watching(task)
                await self._listen(reply.subscription)
            elif reply.response is None:
                await _send_plain(self.send, _Plain(202))
            elif (
                reply.required_scopes is not None
                and self.authorization is not None
                and self.sender is None
            ):
                refused = self.authorization.insufficient(reply.required_scopes)
                await _send_plain(self.send, _answered(refused.answer))
            elif self.sender is not None:
                self.queue.put_nowait(None)
                await self.sender
                await self._event(reply.response)
                await self._chunk(b"", more=False)
            else:
                status = STATUS.get(reply.error_code, 200) if reply.error_code else 200
                await _send_json(self.send, status, reply.response)
        except asyncio.CancelledError:
            if not self.disconnected:
                raise  # the server is shutting down, not the client leaving
        finally:
            timer.cancel()
            for helper in (self.watcher, self.sender):
                if helper is not None and not helper.done():
                    helper.cancel()
                    with contextlib.suppress(BaseException):
                        await helper

    async def _chunk(self, body: bytes, more: bool = True) -> None:
        async with self.lock:
            if not self.started:
                self.started = True
                await self.send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [
                            (b"content-type", b"text/event-stream"),
                            (b"cache-control", b"no-cache"),
                            (b"x-accel-buffering", b"no"),
                        ],
                    }
                )
            await self.send({"type": "http.response.body", "body": body, "more_body": more})

    async def _event(self, message: dict[str, Any]) -> None:
        await self._chunk(b"event: message\ndata: " + jsonrpc.encode(message) + b"\n\n")

    async def _listen(self, subscription: Any) -> None:
        """Hold a subscriptions/listen stream open until the client closes it."""
        try:
            await self._chunk(b"")
            while True:
                await asyncio.sleep(KEEPALIVE_SECONDS)
                await self._chunk(b":\n\n")
        finally:
            self.server.close_subscription(subscription)


def _answered(answer: Answer) -> _Plain:
    return _Plain(answer.status, answer.body, b"application/json", answer.headers)


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _send_plain(send: Send, plain: _Plain) -> None:
    headers = list(plain.extra)
    if plain.body:
        headers.insert(0, (b"content-type", plain.content_type))
    await send({"type": "http.response.start", "status": plain.status, "headers": headers})
    await send({"type": "http.response.body", "body": plain.body})


async def _send_json(send: Send, status: int, message: dict[str, Any]) -> None:
    body = jsonrpc.encode(message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
