"""The client side of Streamable HTTP, for both eras."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from snodo import jsonrpc
from snodo.client.errors import LimitExceeded
from snodo.client.limits import ClientLimits
from snodo.client.transports.base import (
    HttpRefused,
    OnNotification,
    OnRequest,
    TransportError,
    ignore,
    parsed_body,
    unanswerable,
)
from snodo.client.transports.keepalive import resending, unanswered
from snodo.client.transports.sse_reader import SseReader
from snodo.errors import ParseError

__all__ = ["HttpTransport"]

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
    (httpx's errors, resets) is a ``TransportError``. A request that a reused keep-alive
    connection lost before any byte of its answer is sent again (``keepalive``), at most
    ``RESENDS`` times; no other failure is."""

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
    ) -> None:
        import httpx  # noqa: PLC0415 - optional dependency (snodo[http])

        self.limits = limits or ClientLimits()
        self.wire_errors: tuple[type[BaseException], ...] = (
            httpx.HTTPError,
            httpx.StreamError,
            OSError,
        )
        self.url = url
        self.headers = dict(headers or {})
        # auth: an httpx.Auth such as snodo.oauth.OAuth; it sees every request.
        self.client = client or httpx.AsyncClient(
            timeout=timeout, auth=auth, transport=resending(httpx.AsyncHTTPTransport())
        )
        self.listen_timeout = httpx.Timeout(timeout, read=None)
        """The standalone GET stream may stay quiet for as long as the session lasts."""
        parts = httpx.URL(url)
        self.origin: str | None = f"{parts.scheme}://{parts.host}:{parts.port or ''}"
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
    async def _exchange(self, method: str, **options: Any) -> AsyncIterator[Any]:
        """``client.stream(method, url, **options)``, the request sent again when a
        reused connection lost it before any byte of its answer (``keepalive``)."""
        for attempt in range(self.RESENDS + 1):
            request = self.client.build_request(method, self.url, **options)
            try:
                response = await self.client.send(request, stream=True)
                break
            except self.wire_errors as exc:
                if attempt == self.RESENDS or not unanswered(exc):
                    raise
        try:
            yield response
        finally:
            await response.aclose()

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
        async with self._wire():
            return await self._request(message, headers, on_notification)

    async def _request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        cursor = self._reader()
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
            if not (isinstance(refused.body, dict) and "error" in refused.body):
                raise
            yield refused.body

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        """POST a notification or a response: the server acknowledges with 202."""
        async with (
            self._wire(),
            self._exchange(
                "POST", content=jsonrpc.encode(message), headers=self._headers(headers)
            ) as response,
        ):
            if not 200 <= response.status_code < 300:
                raise HttpRefused(response.status_code, await self._refusal(response))

    async def _body(self, response: Any) -> bytes:
        """The whole body, within ``max_message_bytes``."""
        limit = self.limits.max_message_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise LimitExceeded(f"a body of {declared} bytes (the limit is {limit})")
        raw = bytearray()
        async for chunk in response.aiter_bytes():
            raw += chunk
            if len(raw) > limit:
                raise LimitExceeded(f"a body larger than {limit} bytes")
        return bytes(raw)

    async def _refusal(self, response: Any) -> Any:
        """The start of a refusal's body, parsed (``parsed_body``)."""
        raw = bytearray()
        async for chunk in response.aiter_bytes():
            raw += chunk[: REFUSAL_BYTES - len(raw)]
            if len(raw) >= REFUSAL_BYTES:
                break
        return parsed_body(bytes(raw))

    async def _events(
        self, response: Any, cursor: SseReader
    ) -> AsyncGenerator[dict[str, Any], None]:
        cursor.next_stream()
        async for chunk in response.aiter_bytes():
            for item in cursor.feed(chunk):
                yield item

    async def _post(
        self, message: dict[str, Any], headers: Mapping[str, str], cursor: SseReader
    ) -> AsyncGenerator[dict[str, Any], None]:
        body = jsonrpc.encode(message)
        if message.get("method") == "initialize":
            self.session_id = None  # a new session never carries an old one's id
        async with self._exchange("POST", content=body, headers=self._headers(headers)) as response:
            status = response.status_code
            if not 200 <= status < 300:
                raise HttpRefused(status, await self._refusal(response))
            session = response.headers.get("mcp-session-id")
            if session:
                self.session_id = session
            if "text/event-stream" in response.headers.get("content-type", ""):
                async with contextlib.aclosing(self._events(response, cursor)) as events:
                    async for item in events:
                        yield item
                return
            raw = await self._body(response)
            if not raw:
                return
            try:
                value = jsonrpc.decode(raw)
            except ParseError as exc:
                raise TransportError(f"HTTP {response.status_code}: not JSON") from exc
            if not isinstance(value, dict):
                raise TransportError("the server answered with something other than an object")
            yield value

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
        timeout = self.client.timeout if opened is None else self.listen_timeout
        async with self._exchange("GET", headers=sent, timeout=timeout) as response:
            if opened is not None:
                opened.set()
            if not 200 <= response.status_code < 300:
                if opened is None:  # a resumption refused: the answer is lost
                    raise TransportError(f"resuming the stream failed: HTTP {response.status_code}")
                if refused is not None:  # 405: no standalone stream; 404: no session
                    refused.append(response.status_code)
                return
            if "text/event-stream" not in response.headers.get("content-type", ""):
                if refused is not None:
                    refused.append(response.status_code)
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
                async with self._exchange("DELETE", headers=self._headers(headers)):
                    pass
            self.session_id = None

    async def restart(self) -> None:
        """Nothing to restart over HTTP: every request is its own exchange."""

    async def close(self) -> None:
        """Stop the standalone GET stream and close the HTTP client (also one passed in)."""
        if self.listener is not None:
            self.listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.listener
        await self.client.aclose()
