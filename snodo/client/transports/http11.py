"""A lean HTTP/1.1 client for one origin: keep-alive connections on asyncio protocols, answers
parsed by httptools (the C parser uvicorn's ``[standard]`` extra serves with).

Why not httpx: it checks every pooled connection per request and parses in pure Python
(``bench/client_flow.py``); here a request is one ``bytes``, the pool a stack.

A request that a reused keep-alive connection lost before any byte of its answer raises
``keepalive.Unanswered`` (the caller sends it again); any other failure of the connection is a
``WireError`` (an ``OSError``), a read that waited past the timeout a ``WireTimeout``; a request
that cannot be written safely (a header with a line break, NUL or a character outside ASCII) is a
``WireError`` too, and nothing of it is sent. An answer's head is bounded (``answer_head``).
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import AsyncIterator, Mapping
from typing import cast
from urllib.parse import urlsplit

try:
    import httptools
except ModuleNotFoundError as missing:  # a bare install: HttpTransport falls back to httpx
    message = "snodo.client.transports.http11 needs the snodo[http] extra"
    raise ModuleNotFoundError(f"{message}: pip install 'snodo[http]'") from missing

from snodo.client.transports.answer_head import Head, HeadTooLarge
from snodo.client.transports.keepalive import Unanswered
from snodo.client.transports.tls import default_tls

__all__ = ["Answer", "Origin", "WireError", "WireTimeout"]

HIGH_WATER = 256 * 1024
"""Bytes of an answer held unread before the connection stops reading from its socket."""
LOW_WATER = 64 * 1024
"""...and below which it reads again."""
MAX_CONNECTIONS = 100
"""Connections open at once to the origin; a request beyond them waits for one."""
MAX_IDLE = 20
"""Idle keep-alive connections kept; more are closed when released."""


class WireError(ConnectionError):
    """The connection failed: not made, reset, closed early, or not answered in HTTP/1.1."""


class WireTimeout(WireError, TimeoutError):
    """No byte of the answer for longer than the timeout (or no connection made in it)."""


class Answer:
    """One response: ``status`` and ``headers`` (names in lower case) once the head has come,
    then the body, in ``chunks()``. ``aclose()`` hands a connection whose answer was read to
    the end back to the pool, and closes any other."""

    __slots__ = (
        "_chunks",
        "_connection",
        "_head",
        "_waiter",
        "buffered",
        "complete",
        "delimited",
        "error",
        "headers",
        "keep_alive",
        "last",
        "status",
        "timeout",
    )

    def __init__(self, connection: _Connection, head: asyncio.Future[None]) -> None:
        self._connection: _Connection | None = connection
        self._head = head
        self._chunks: collections.deque[bytes] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self.status = 0
        self.headers: dict[str, str] = {}
        self.buffered = 0
        self.complete = False
        self.delimited = False
        """Whether the body's end is declared (length or chunked), not the connection's."""
        self.keep_alive = False
        self.error: BaseException | None = None
        self.last = 0.0
        """When a byte last arrived (the loop's clock), for the read timeout."""
        self.timeout: float | None = None  # the longest silence allowed, None for any

    def header(self, name: str) -> str:
        """A header's value (``name`` in lower case), empty when absent."""
        return self.headers.get(name, "")

    def _wake(self) -> None:
        if not self._head.done():  # a body of stated length: its head is handed on with it
            self._head.set_result(None)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fed(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self.buffered += len(chunk)
        self._wake()

    def _finished(self) -> None:
        self.complete = True
        self._wake()

    def _failed(self, error: BaseException) -> None:
        if self.complete or self.error is not None:
            return
        self.error = error
        if not self._head.done():
            self._head.set_exception(error)
        self._wake()

    def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives: the answer is its own iterator (no generator is left
        for the loop to finalize when the reader stops early)."""
        return self

    def __aiter__(self) -> Answer:
        return self

    async def __anext__(self) -> bytes:
        queue = self._chunks
        while True:
            if queue:
                chunk = queue.popleft()
                self.buffered -= len(chunk)
                connection = self._connection
                if connection is not None and connection.paused and self.buffered < LOW_WATER:
                    connection.resume()
                return chunk
            if self.error is not None:
                raise self.error
            if self.complete:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
            self._waiter = None

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        connection.answer = None
        if self.complete and self.keep_alive:
            connection.origin.release(connection)
        else:
            connection.close()


class _Connection(asyncio.Protocol):
    """One keep-alive connection; it knows whether it carried an answer before the
    request now on it (``reused``) and whether a byte of that request's answer came
    (``heard``): the two conditions of ``Unanswered``."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.answer: Answer | None = None
        self.closed = False
        self.answered = 0
        """Answers read whole on this connection."""
        self.reused = False
        self.heard = False
        self.paused = False
        self.informational = False
        self.head = Head()
        self.drained: asyncio.Future[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        """One per connection, left running between answers (``_expire``)."""

    # -- asyncio's side ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A read-write transport, though not always asyncio's class (uvloop has its own).
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        answer = self.answer
        if answer is None or answer.complete:
            # Bytes no request asked for: the connection cannot be trusted again.
            self.close()
            return
        self.heard = True
        answer.last = self.origin.loop.time()
        try:
            self.parser.feed_data(data)
            if not answer.status:  # still no head, none before: httptools holds what came
                self.head.reading(len(data))
        except httptools.HttpParserUpgrade:
            answer._failed(WireError("the server switched protocols"))
            self.close()
        except (httptools.HttpParserError, HeadTooLarge) as exc:
            found = exc.__context__ if isinstance(exc, httptools.HttpParserError) else exc
            why = found if isinstance(found, HeadTooLarge) else f"not an HTTP/1.1 answer: {exc}"
            answer._failed(WireError(why))
            self.close()

    def eof_received(self) -> bool:
        return False  # the transport closes; connection_lost says what it means

    def connection_lost(self, exc: Exception | None) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if not self.closed:
            self.closed = True
            self.origin.lost()
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)
        answer = self.answer
        if answer is None or answer.complete or answer.error is not None:
            return
        if answer.status and not answer.delimited and exc is None:
            answer._finished()  # the body ran to the connection's end, as it said it would
        elif self.reused and not self.heard:
            answer._failed(Unanswered("the reused connection closed before any byte of the answer"))
        else:
            reason = f": {exc}" if exc else ""
            answer._failed(WireError(f"the connection closed before the answer's end{reason}"))

    def pause_writing(self) -> None:
        self.drained = self.origin.loop.create_future()

    def resume_writing(self) -> None:
        drained, self.drained = self.drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    # -- httptools' side --------------------------------------------------------------------

    def on_message_begin(self) -> None:
        answer = self.answer
        if answer is None or answer.complete:
            # A second answer where one request was sent: parsing stops here, and the
            # connection is closed (``data_received``) rather than reused.
            raise WireError("bytes no request asked for")

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.answer is not None
        self.head.header(self.answer.headers, name, value)

    def on_headers_complete(self) -> None:
        answer = self.answer
        assert answer is not None
        status = self.parser.get_status_code()
        self.head.complete(answer.headers)
        if 100 <= status < 200:  # an interim answer (100 Continue, 103): the real one follows
            self.informational = True
            answer.headers = {}
            return
        answer.status = status
        answer.keep_alive = self.parser.should_keep_alive()
        headers = answer.headers
        answer.delimited = (
            "content-length" in headers
            or "chunked" in headers.get("transfer-encoding", "")
            or status in (204, 304)
        )
        # A body of stated length, often written apart from its head, wakes the request
        # with its first bytes (``Answer._wake``); a stream's head is handed on at once.
        if headers.get("content-length", "0") == "0" and not answer._head.done():
            answer._head.set_result(None)

    def on_body(self, body: bytes) -> None:
        answer = self.answer
        assert answer is not None
        answer._fed(body)
        if answer.buffered > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        if self.informational:
            self.informational = False
            return
        answer = self.answer
        assert answer is not None
        self.answered += 1
        answer._finished()

    # -- the client's side ------------------------------------------------------------------

    def resume(self) -> None:
        self.paused = False
        if self.transport is not None and not self.closed:
            self.transport.resume_reading()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.transport is not None:
            self.transport.close()
        if not self.closed:
            self.closed = True
            self.origin.lost()

    async def send(self, data: bytes, timeout: float | None) -> Answer:
        """Write the request and wait for its answer's head (``timeout``: the longest
        silence, None for none)."""
        loop = self.origin.loop
        head: asyncio.Future[None] = loop.create_future()
        answer = Answer(self, head)
        self.answer = answer
        self.reused = self.answered > 0
        self.heard, self.head = False, Head()  # a head of its own, counted from nothing
        answer.last = loop.time()
        answer.timeout = timeout
        if timeout is not None and self.timer is None:
            self.timer = loop.call_at(answer.last + timeout, self._expire)
        assert self.transport is not None
        self.transport.write(data)
        if self.drained is not None:
            await self.drained
        await head
        return answer

    def _expire(self) -> None:
        """The answer on the connection was silent too long, or is waited for from its
        last byte, or there is none (the timer then stops until the next request)."""
        self.timer = None
        answer = self.answer
        if answer is None or (timeout := answer.timeout) is None or answer.complete or answer.error:
            return
        due = answer.last + timeout
        loop = self.origin.loop
        if loop.time() < due:  # a byte came meanwhile, or a later request: wait on
            self.timer = loop.call_at(due, self._expire)
            return
        answer._failed(WireTimeout(f"no answer for {timeout:g} s"))
        drained = self.drained
        if drained is not None and not drained.done():
            drained.set_result(None)
        self.close()


class Origin:
    """The connections to one ``http://`` or ``https://`` origin, and the requests to
    one URL on it: ``open(method, headers, body)`` returns the answer once its head has
    come."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float | None = 30.0,
        tls: ssl.SSLContext | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http:// or https:// URL: {url!r}")
        self.host = parts.hostname
        secure = parts.scheme == "https"
        self.port = parts.port or (443 if secure else 80)
        self.tls = (tls or default_tls()) if secure else None
        named = f"[{self.host}]" if ":" in self.host else self.host
        authority = named if parts.port in (None, 443 if secure else 80) else f"{named}:{self.port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.timeout = timeout
        self.max_connections = max_connections
        self._heads = {
            method: f"{method} {target} HTTP/1.1\r\nhost: {authority}\r\n".encode("ascii")
            for method in ("GET", "POST", "DELETE")
        }
        self.idle: list[_Connection] = []
        self.open_count = 0
        self.waiters: collections.deque[asyncio.Future[_Connection | None]] = collections.deque()
        self.shut = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def encode(self, method: str, headers: Mapping[str, str], body: bytes | None = None) -> bytes:
        """The whole request, head and body, as it goes on the wire. A header name or
        value that could end its line early (CR, LF, NUL) is refused, not sent."""
        lines = "".join([f"{name}: {value}\r\n" for name, value in headers.items()])
        count = len(headers)
        if lines.count("\n") != count or lines.count("\r") != count or "\0" in lines:
            raise WireError("a header name or value holds a line break or NUL: not sent")
        try:
            head = self._heads[method] + lines.encode("ascii")
        except UnicodeEncodeError:
            raise WireError("a header name or value is not ASCII: not sent") from None
        if body is None:
            return head + b"\r\n"
        return b"%scontent-length: %d\r\n\r\n%s" % (head, len(body), body)

    async def open(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
        *,
        listen: bool = False,
    ) -> Answer:
        """Send the request and return its answer once the head has come; ``listen``:
        wait for its bytes as long as the server stays quiet (a standalone stream)."""
        data = self.encode(method, headers, body)
        wait = None if listen else self.timeout
        connection = await self._acquire()
        try:
            return await connection.send(data, wait)
        except BaseException:
            connection.answer = None
            connection.close()
            raise

    async def _acquire(self) -> _Connection:
        if self.shut:
            raise WireError("the client is closed")
        idle = self.idle
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
        if self.open_count >= self.max_connections:
            waiter: asyncio.Future[_Connection | None] = self.loop.create_future()
            self.waiters.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                # Cancelled with a connection already handed over: it goes to the next.
                late = waiter.result() if waiter.done() and not waiter.cancelled() else None
                if late is not None:
                    self.release(late)
                raise
            if handed is not None:
                return handed
            return await self._acquire()  # a connection closed: room for a new one
        return await self._connect()

    async def _connect(self) -> _Connection:
        self.open_count += 1
        connection = _Connection(self)
        try:
            connect = self.loop.create_connection(
                lambda: connection,
                self.host,
                self.port,
                ssl=self.tls,
                server_hostname=self.host if self.tls is not None else None,
            )
            if self.timeout is None:
                await connect
            else:
                async with asyncio.timeout(self.timeout):
                    await connect
        except TimeoutError:
            self.lost()
            message = f"no connection to {self.host}:{self.port} in {self.timeout:g} s"
            raise WireTimeout(message) from None
        except BaseException:
            self.lost()
            raise
        return connection

    def release(self, connection: _Connection) -> None:
        """A connection whose answer was read whole: to a waiting request, else idle."""
        if connection.closed:
            return
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(connection)
                return
        if self.shut or len(self.idle) >= MAX_IDLE:
            connection.close()
        else:
            self.idle.append(connection)

    def lost(self) -> None:
        """A connection closed: its place goes to a waiting request."""
        self.open_count -= 1
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        """Close the idle connections; those in use close when their answers do."""
        self.shut = True
        idle, self.idle = self.idle, []
        for connection in idle:
            connection.close()
        while self.waiters:  # a request waiting for a connection learns the client closed
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
