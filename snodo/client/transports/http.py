"""The client side of Streamable HTTP, for both eras."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol
from urllib.parse import urlsplit

from snodo.client.errors import LimitExceeded, NotAuthorized
from snodo.client.limits import ClientLimits
from snodo.client.transports import passthrough
from snodo.client.transports.base import (
    HttpRefused,
    OnNotification,
    OnRequest,
    TransportError,
    ignore,
    parsed_body,
    unanswerable,
)
from snodo.client.transports.keepalive import unanswered
from snodo.client.transports.sse_reader import SseReader
from snodo.core import jsonrpc
from snodo.core.errors import ParseError

__all__ = ["HttpTransport"]


class Answer(Protocol):
    """One response as the transport reads it (``http11.Answer``, ``HttpxAnswer``)."""

    @property
    def status(self) -> int: ...

    def header(self, name: str) -> str: ...

    def chunks(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class Wire(Protocol):
    """Where requests go: ``http11.Origin`` or ``HttpxWire``."""

    async def open(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        *,
        listen: bool = False,
    ) -> Answer: ...

    async def aclose(self) -> None: ...


REFUSAL_BYTES = 64 * 1024
"""How much of a refusal's body is read: enough for any JSON-RPC error; the rest is
dropped, however much the server sends."""


class HttpTransport:
    """Streamable HTTP: one POST a request; JSON or SSE answers.

    For a legacy (initialize-based) session it also keeps the ``Mcp-Session-Id`` the server
    assigns and sends it back, answers server-to-client requests that arrive on a
    response stream, resumes a stream the server closed early (GET with
    ``Last-Event-ID`` after the ``retry`` delay), holds the standalone GET stream and
    ends the session with DELETE.

    Bodies, SSE lines and events are read within ``limits`` (``LimitExceeded``), any
    status outside 2xx is ``HttpRefused``, and every failure of the connection itself
    (resets, timeouts, httpx's errors) is a ``TransportError``. A request that a reused
    keep-alive connection lost before any byte of its answer is sent again
    (``keepalive``), at most ``RESENDS`` times; no other failure is.

    Requests go out on ``http11`` (keep-alive HTTP/1.1, parsed by httptools); through
    httpx (``httpx_wire``) when the program hands in an ``httpx.AsyncClient`` (``client``)
    or an ``httpx.Auth`` (``auth``, e.g. ``snodo.oauth.OAuth``), or the environment names
    a proxy for the URL (``HTTP_PROXY`` and the like, which httpx follows). ``tls``: the
    ``ssl.SSLContext`` an ``https://`` URL is reached with on ``http11`` (default:
    certifi's roots where installed, else the system's)."""

    probe_with_discover = False
    RESENDS = 2
    RESUME_ATTEMPTS = 5
    DEFAULT_RETRY = 1.0
    """Seconds before resuming a stream whose server gave no ``retry``."""
    OPEN_STREAM_WAIT = 5.0
    RECONNECT_FIRST = 0.5
    """Seconds before the session's stream is opened again the first time, doubling."""
    RECONNECT_MAX = 30.0
    """The longest wait between attempts to open the session's stream again."""
    """Seconds to wait for the standalone GET stream's response headers."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        client: Any = None,
        auth: Any = None,
        limits: ClientLimits | None = None,
        tls: Any = None,
    ) -> None:
        self.limits = limits or ClientLimits()
        self.url = url
        self.headers = dict(headers or {})
        self.client: Any = None
        """The ``httpx.AsyncClient`` requests go through, when they go through httpx."""
        self.wire: Wire
        lean = _lean_origin(url, timeout, tls) if client is None and auth is None else None
        if lean is not None:
            self.wire = lean
            self.wire_errors: tuple[type[BaseException], ...] = (OSError,)
        else:
            from snodo.client.transports.httpx_wire import HttpxWire  # noqa: PLC0415

            # auth: an httpx.Auth such as snodo.oauth.OAuth; it sees every request.
            wire = HttpxWire(url, client, auth, timeout)
            self.wire, self.client, self.wire_errors = wire, wire.client, wire.errors
        parts = urlsplit(url)
        port = None if parts.port == {"http": 80, "https": 443}.get(parts.scheme) else parts.port
        self.origin: str | None = f"{parts.scheme}://{parts.hostname}:{port or ''}"
        self.session_id: str | None = None
        self.on_request: OnRequest | None = None
        self.on_unsolicited: OnNotification = ignore
        self.listener: asyncio.Task[None] | None = None

    def _headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        session = {"mcp-session-id": self.session_id} if self.session_id else {}
        return {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **self.headers,
            **session,
            **headers,
        }

    def serve(self, on_request: OnRequest, on_notification: OnNotification) -> None:
        """Install the legacy session's handlers for what arrives on its streams."""
        self.on_request = on_request
        self.on_unsolicited = on_notification

    def _reader(self) -> SseReader:
        return SseReader(self.limits.max_sse_line_bytes, self.limits.max_message_bytes)

    @asynccontextmanager
    async def _exchange(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        listen: bool = False,
    ) -> AsyncIterator[Answer]:
        """The answer to one request (``_open``), closed when done with."""
        response = await self._open(method, headers, body, listen)
        try:
            yield response
        finally:
            await response.aclose()

    async def _open(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        listen: bool = False,
    ) -> Answer:
        """The answer to one request, sent again when a reused connection lost it
        before any byte of its answer (``keepalive``)."""
        for attempt in range(self.RESENDS + 1):
            try:
                return await self.wire.open(method, headers, body, listen=listen)
            except self.wire_errors as exc:
                if attempt == self.RESENDS or not unanswered(exc):
                    raise
        raise AssertionError("unreachable")

    @asynccontextmanager
    async def _wire(self) -> AsyncIterator[None]:
        """The connection's own failures, as the client's TransportError."""
        try:
            yield
        except self.wire_errors as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """POST ``message`` and return its response, answering server-to-client requests
        on the way and resuming a stream the server closed before the answer."""
        try:  # as _wire(), without a context manager's cost on every request
            return await self._request(message, headers, on_notification, jsonrpc.decode)
        except self.wire_errors as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None

    async def request_passing(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """``request``, its complete result's large members kept as their bytes
        (``snodo.client.transports.passthrough``), for a proxy that passes them on."""
        try:
            return await self._request(message, headers, on_notification, passthrough.decode)
        except self.wire_errors as exc:
            raise TransportError(f"{type(exc).__name__}: {exc}") from None

    async def _request(
        self,
        message: dict[str, Any],
        headers: Mapping[str, str],
        on_notification: OnNotification,
        decode: Callable[[bytes], Any],
    ) -> dict[str, Any]:
        cursor = self._reader()
        cursor.decode = decode
        stream = self._post(message, headers, cursor)
        heard = 0
        for attempt in range(self.RESUME_ATTEMPTS + 1):
            # Closed here, not by the loop's finalizer: returning with the answer closes
            # the response at once, and leaves no task behind.
            async with contextlib.aclosing(stream):
                async for item in stream:
                    if "method" not in item and item.get("id") == message.get("id"):
                        return item
                    if "error" in item and item.get("id") is None:
                        return item  # refused before its id could be read (a -32700, say)
                    if "method" not in item:
                        continue  # an answer to some other request: not ours
                    heard += 1
                    if heard > self.limits.max_notifications:
                        raise LimitExceeded(
                            f"more than {self.limits.max_notifications} messages before the answer"
                        )
                    if "id" in item:
                        await self._answer(item, headers)
                    else:
                        on_notification(item)
            if cursor.last_id is None or attempt == self.RESUME_ATTEMPTS:
                break
            # The server closed the stream before the answer and left a place to resume.
            await asyncio.sleep(self.DEFAULT_RETRY if cursor.retry is None else cursor.retry)
            stream = self._get(headers, cursor)
        raise TransportError("the response stream ended without an answer")

    async def _answer(self, request: dict[str, Any], headers: Mapping[str, str]) -> None:
        """A server-to-client request on a response stream: answer it with a POST."""
        if self.on_request is None:
            reply: dict[str, Any] | None = unanswerable(request)
        else:
            reply = await self.on_request(request)
        if reply is not None:  # None: the server cancelled it, so no answer is sent
            await self.notify(reply, headers)

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """POST ``message`` and yield what its answer carries; a refusal whose body is a
        JSON-RPC error is yielded as that error."""
        try:
            async with (
                self._wire(),
                contextlib.aclosing(self._post(message, headers, self._reader())) as posted,
            ):
                async for item in posted:
                    yield item
        except HttpRefused as refused:
            # A JSON-RPC error in a refusal's body is the answer; a credential refused
            # is not, whatever its body (an OAuth error has an "error" too).
            if isinstance(refused, NotAuthorized) or not (
                isinstance(refused.body, dict) and "error" in refused.body
            ):
                raise
            yield refused.body

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        """POST a notification or a response: the server acknowledges with 202."""
        async with (
            self._wire(),
            self._exchange("POST", self._headers(headers), jsonrpc.encode(message)) as response,
        ):
            if not 200 <= response.status < 300:
                status = response.status
                raise self._refused(status, await self._refusal(response), response)

    async def _body(self, response: Answer) -> bytes:
        """The whole body, within ``max_message_bytes``."""
        limit = self.limits.max_message_bytes
        declared = response.header("content-length")
        if declared.isdigit() and int(declared) > limit:
            raise LimitExceeded(f"a body of {declared} bytes (the limit is {limit})")
        raw = bytearray()
        async for chunk in response.chunks():
            raw += chunk
            if len(raw) > limit:
                raise LimitExceeded(f"a body larger than {limit} bytes")
        return bytes(raw)

    @staticmethod
    def _refused(status: int, body: Any, response: Answer) -> HttpRefused:
        """The error for a status outside 2xx: ``NotAuthorized`` for 401 and 403, a
        redirect's ``location`` kept for the error to name."""
        if status in (401, 403):
            return NotAuthorized(status, body, response.header("www-authenticate"))
        return HttpRefused(status, body, response.header("location") if status < 400 else "")

    async def _refusal(self, response: Answer) -> Any:
        """The start of a refusal's body, parsed (``parsed_body``)."""
        raw = bytearray()
        async for chunk in response.chunks():
            raw += chunk[: REFUSAL_BYTES - len(raw)]
            if len(raw) >= REFUSAL_BYTES:
                break
        return parsed_body(bytes(raw))

    async def _events(
        self, response: Answer, cursor: SseReader
    ) -> AsyncGenerator[dict[str, Any], None]:
        cursor.next_stream()
        async for chunk in response.chunks():
            for item in cursor.feed(chunk):
                yield item

    async def _post(
        self, message: dict[str, Any], headers: Mapping[str, str], cursor: SseReader
    ) -> AsyncGenerator[dict[str, Any], None]:
        body = jsonrpc.encode(message)
        if message.get("method") == "initialize":
            self.session_id = None  # a new session never carries an old one's id
        response = await self._open("POST", self._headers(headers), body)
        try:  # as _exchange(), without a context manager's cost on every request
            status = response.status
            if not 200 <= status < 300:
                raise self._refused(status, await self._refusal(response), response)
            session = response.header("mcp-session-id")
            if session:
                self.session_id = session
            if "text/event-stream" in response.header("content-type"):
                async with contextlib.aclosing(self._events(response, cursor)) as events:
                    async for item in events:
                        yield item
                return
            raw = await self._body(response)
            if not raw:
                return
            try:
                value = cursor.decode(raw)
            except ParseError as exc:
                raise TransportError(f"HTTP {status}: not JSON") from exc
            if not isinstance(value, dict):
                raise TransportError("the server answered with something other than an object")
            yield value
        finally:
            await response.aclose()

    async def _get(
        self,
        headers: Mapping[str, str],
        cursor: SseReader,
        opened: asyncio.Event | None = None,
        refused: list[int] | None = None,
    ) -> AsyncGenerator[dict[str, Any], None]:
        """GET the session's stream (resuming after ``cursor.last_id`` when set);
        ``opened``: the standalone stream, set once the server has answered the GET;
        ``refused`` gets the status of a standalone stream the server will not give."""
        sent = {k: v for k, v in self._headers(headers).items() if k != "content-type"}
        sent["accept"] = "text/event-stream"
        if cursor.last_id is not None:
            sent["last-event-id"] = cursor.last_id
        async with self._exchange("GET", sent, listen=opened is not None) as response:
            if opened is not None:
                opened.set()
            if not 200 <= response.status < 300:
                if opened is None:  # a resumption refused: the answer is lost
                    raise TransportError(f"resuming the stream failed: HTTP {response.status}")
                if refused is not None:  # 405: no standalone stream; 404: no session
                    refused.append(response.status)
                return
            if "text/event-stream" not in response.header("content-type"):
                if refused is not None:
                    refused.append(response.status)
                return
            async with contextlib.aclosing(self._events(response, cursor)) as events:
                async for item in events:
                    yield item

    async def begin_session(self, headers: Mapping[str, str]) -> None:
        """Open the standalone GET stream (where the server offers one) for the
        session's notifications and server-to-client requests."""
        opened = asyncio.Event()
        self.listener = asyncio.ensure_future(self._listen(dict(headers), opened))
        # Wait for the stream to be there (or refused), so nothing sent from now on can
        # miss it; a server slow to answer the GET does not hold the session up long.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(opened.wait(), self.OPEN_STREAM_WAIT)

    async def _listen(self, headers: dict[str, str], opened: asyncio.Event) -> None:
        """The standalone stream for as long as the session lasts: when the server or a
        proxy closes it, it is opened again, after the server's ``retry`` or a backoff
        (``RECONNECT_FIRST`` doubling to ``RECONNECT_MAX``), resuming after the last
        event id the server gave; not when the server refuses it (405, 404)."""
        cursor = self._reader()
        backoff = self.RECONNECT_FIRST
        try:
            while True:
                refused: list[int] = []
                heard = False
                try:
                    got = self._get(headers, cursor, opened, refused)
                    async with contextlib.aclosing(got) as events:
                        async for item in events:
                            heard = True
                            if "method" in item and "id" in item:
                                await self._answer(item, headers)
                            elif "method" in item:
                                self.on_unsolicited(item)
                except Exception:  # dropped mid-stream, or no connection: tried again below
                    pass
                if refused:
                    return  # the session goes on without a standalone stream
                if heard:
                    backoff = self.RECONNECT_FIRST
                await asyncio.sleep(cursor.retry if cursor.retry is not None else backoff)
                backoff = min(backoff * 2, self.RECONNECT_MAX)
        finally:
            opened.set()

    async def end_session(self, headers: Mapping[str, str]) -> None:
        """Stop listening and DELETE the session (a 405 means the server keeps it)."""
        if self.listener is not None:
            self.listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.listener
            self.listener = None
        if self.session_id is not None:
            with contextlib.suppress(Exception):
                async with self._exchange("DELETE", self._headers(headers)):
                    pass
            self.session_id = None

    async def restart(self) -> None:
        """Nothing to restart over HTTP: every request is its own exchange."""

    async def close(self) -> None:
        """Stop the standalone GET stream and close the connections (an httpx client
        passed in too)."""
        if self.listener is not None:
            self.listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.listener
        await self.wire.aclose()


def _lean_origin(url: str, timeout: float, tls: Any) -> Wire | None:
    """``http11``'s origin for ``url``; None where httpx must carry the requests: httptools
    is missing, or the environment names a proxy for the URL."""
    try:
        from snodo.client.transports.http11 import Origin  # noqa: PLC0415 - needs httptools
    except ImportError:
        return None
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if (parts.scheme in proxies or "all" in proxies) and not urllib.request.proxy_bypass(
        parts.hostname or ""
    ):
        return None
    return Origin(url, timeout=timeout, tls=tls)
