"""One Streamable HTTP POST of the current revision, run and answered.

``HttpApp`` (``snodo.transports.http``) checks the head and the body and hands the
message here: the request runs in the ASGI task, answered as JSON, or as SSE once it
emits a notification or opens a subscriptions/listen stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from snodo.auth.protected import Answer, ProtectedResource
from snodo.core import jsonrpc
from snodo.core.errors import ErrorCode, retry_after
from snodo.core.request_path import answer
from snodo.core.types import OpenStream
from snodo.server import Server
from snodo.transports.http_head import Plain
from snodo.transports.late_requests import LateRequests

__all__ = ["KEEPALIVE_SECONDS", "STATUS", "Exchange", "answered", "send_json", "send_plain"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

KEEPALIVE_SECONDS = 15.0
"""Seconds between the comments that keep an idle subscriptions/listen stream open."""

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


class Exchange:
    """One POST: run the request, answering JSON, or SSE once a notification appears.

    The handler runs in the ASGI task itself. Only a request still running, or still
    sending its answer, after WATCH_AFTER seconds gets a task watching for the client
    going away (which cancels it), and only a request that emits a notification gets a
    task streaming events: a plain call costs neither.
    """

    # Not slotted: what a plain call never sets is read from the class, so each POST
    # assigns only what it was given.
    queue: asyncio.Queue[dict[str, Any] | None] | None = None
    """Made with the first notification, as the sender is: a plain call needs neither."""
    sender: asyncio.Task[None] | None = None
    watcher: asyncio.Task[None] | None = None
    task: asyncio.Task[Any] | None = None
    disconnected = False
    started = False
    lock: asyncio.Lock | None = None

    def __init__(
        self,
        server: Server,
        message: Any,
        headers: Mapping[str, str],
        principal: str | None,
        scopes: frozenset[str] | None,
        authorization: ProtectedResource | None,
        streams: bool,
        receive: Receive,
        send: Send,
        checked_meta: tuple[dict[str, Any], str, dict[str, Any]] | None = None,
    ) -> None:
        self.server = server
        self.message = message
        self.headers = headers
        self.principal = principal
        self.scopes = scopes  # with OAuth: what the token grants
        self.authorization = authorization  # and what answers an insufficient scope
        self.streams = streams
        self.receive = receive
        self.send = send
        self.checked_meta = checked_meta  # the header checks' required_meta, for the core

    def _emit(self, note: dict[str, Any]) -> None:
        if not self.streams:
            return  # the client takes JSON only: request-scoped notifications are dropped
        if self.queue is None:
            self.queue = asyncio.Queue()
            self.sender = asyncio.ensure_future(self._stream_events(self.queue))
        self.queue.put_nowait(note)

    async def _stream_events(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        while (note := await queue.get()) is not None:
            await self._event(note)

    async def _watch(self, task: asyncio.Task[Any]) -> None:
        await _wait_disconnect(self.receive)
        self.disconnected = True
        task.cancel()

    def start_watching(self) -> None:
        if self.watcher is None and self.task is not None:
            self.watcher = asyncio.ensure_future(self._watch(self.task))

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self.task = asyncio.current_task(loop)
        late = LateRequests.of_loop(loop)
        late.add(self)
        helpers: list[asyncio.Task[None]] | None = None
        try:
            # ``Server.handle`` is ``answer``: called here without the method between.
            reply = await answer(
                self.server,
                self.message,
                self.principal,
                "http",
                self.headers,
                self._emit,
                self.scopes,
                self.checked_meta,
            )
            if reply.subscription is not None:
                self.start_watching()
                await self._listen(reply.subscription)
            elif reply.response is None:
                await send_plain(self.send, Plain(202))
            elif (
                reply.required_scopes is not None
                and self.authorization is not None
                and self.sender is None
            ):
                refused = self.authorization.insufficient(reply.required_scopes)
                await send_plain(self.send, answered(refused.answer))
            elif self.sender is not None and self.queue is not None:
                self.queue.put_nowait(None)
                await self.sender
                await self._event(reply.response)
                await self._chunk(b"", more=False)
            else:  # send_json's two messages, sent from here: a coroutine fewer
                error = reply.response.get("error")  # Reply.error_code, without its call
                body = jsonrpc.encode(reply.response)
                status = 200
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", b"%d" % len(body)),
                ]
                if type(error) is dict:
                    status = STATUS.get(error["code"], 200)
                    wait = retry_after(reply.response)
                    if wait is not None:  # refused for rate: 429, and when to come back
                        status = 429
                        headers.append((b"retry-after", b"%d" % wait))
                await self.send(
                    {"type": "http.response.start", "status": status, "headers": headers}
                )
                await self.send({"type": "http.response.body", "body": body})
        except asyncio.CancelledError:
            if not self.disconnected:
                raise  # the server is shutting down, not the client leaving
        finally:
            # Left in the table while the answer is sent: a client that stalls the send
            # past WATCH_AFTER gets a watcher too, and is let go if it leaves.
            late.remove(self)
            if self.watcher is not None or self.sender is not None:
                helpers = [h for h in (self.watcher, self.sender) if h is not None and not h.done()]
                for helper in helpers:
                    helper.cancel()
        # Awaited after the ``finally``, not in it: compiled (setup.py), an await there
        # raises to the caller the cancellation the ``except`` has just swallowed. On the
        # way out by an exception they are only cancelled, and end on the loop's next turn.
        if helpers:
            await asyncio.gather(*helpers, return_exceptions=True)

    async def _chunk(self, body: bytes, more: bool = True) -> None:
        if self.lock is None:
            self.lock = asyncio.Lock()
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

    async def _listen(self, subscription: OpenStream) -> None:
        """Hold a subscriptions/listen stream open until the client closes it, or the
        server ends it (its completion result, then the end of the stream)."""
        try:
            await self._chunk(b"")
            while not subscription.ended.is_set():
                try:
                    async with asyncio.timeout(KEEPALIVE_SECONDS):
                        await subscription.ended.wait()
                except TimeoutError:
                    await self._chunk(b":\n\n")
            if self.sender is not None and self.queue is not None:
                self.queue.put_nowait(None)  # what was emitted, the final result last
                await self.sender
            await self._chunk(b"", more=False)
        finally:
            self.server.close_subscription(subscription)


def answered(answer: Answer) -> Plain:
    """An OAuth answer (``snodo.auth``) as a plain HTTP response."""
    return Plain(answer.status, answer.body, answer.content_type, answer.headers)


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def send_plain(send: Send, plain: Plain) -> None:
    """Answer with a status and a short body, no JSON-RPC."""
    headers = list(plain.extra)
    if plain.body:
        headers.insert(0, (b"content-type", plain.content_type))
    await send({"type": "http.response.start", "status": plain.status, "headers": headers})
    await send({"type": "http.response.body", "body": plain.body})


async def send_json(send: Send, status: int, message: dict[str, Any]) -> None:
    """Answer with one JSON-RPC message as ``application/json``."""
    body = jsonrpc.encode(message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
