"""The client side of stdio: a server subprocess, for both eras."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any

from snodo.client.errors import LimitExceeded
from snodo.client.limits import ClientLimits
from snodo.client.transports import passthrough
from snodo.client.transports.base import (
    SUBSCRIPTION_ID,
    OnNotification,
    OnRequest,
    TransportError,
    ignore,
    unanswerable,
)
from snodo.core import jsonrpc
from snodo.core.errors import ParseError

__all__ = ["StdioTransport"]


class StdioTransport:
    """A server subprocess speaking newline-delimited JSON-RPC on its stdin/stdout.

    One read loop owns stdout: responses go to the request waiting for them,
    notifications to the listeners of the requests in flight (or, with none
    interested, to the session's ``on_notification``), and server-to-client requests
    (a legacy session's elicitation, sampling, roots, ping) to ``on_request``, whose
    response is written back.

    No line can stop the read loop: one longer than ``limits.max_message_bytes`` is
    dropped unread, one that is not JSON (too deep, too many values) is skipped, and the
    request it answered runs into its timeout while every other goes on. A request
    hearing more than ``limits.max_notifications`` notifications fails with
    ``LimitExceeded``. ``close()`` gives the child ``limits.close_grace`` seconds to
    exit before killing it."""

    probe_with_discover = True
    origin: str | None = None

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        limits: ClientLimits | None = None,
        stderr: Any = None,
    ) -> None:
        self.limits = limits or ClientLimits()
        self.command = list(command)
        self.env = {**os.environ, **(env or {})}
        self.stderr = stderr
        """Where the child's stderr goes: a file object or descriptor; None, this
        process's stderr."""
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.listeners: list[tuple[OnNotification, Any]] = []
        """(callback, progress token) of each request in flight."""
        self.reader: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()
        self.on_request: OnRequest | None = None
        self.on_unsolicited: OnNotification = ignore
        self.passing: set[Any] = set()
        """Ids of the requests in flight whose large result members may stay bytes."""
        self.answering: set[asyncio.Task[None]] = set()
        self.ended = False
        """The read loop is over: nothing more will be answered."""

    async def _start(self) -> asyncio.subprocess.Process:
        if self.process is None:
            self.process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=self.stderr,
                env=self.env,
                limit=self.limits.max_message_bytes,
            )
            self.reader = asyncio.ensure_future(self._read(self.process))
        return self.process

    def serve(self, on_request: OnRequest, on_notification: OnNotification) -> None:
        """Install the legacy session's handlers for server requests and unclaimed
        notifications."""
        self.on_request = on_request
        self.on_unsolicited = on_notification

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        try:
            async for line in _lines(process.stdout):
                # Whatever one line does (not JSON, a callback that fails on it), the
                # loop goes on to the next: it alone answers every request.
                with contextlib.suppress(ParseError, Exception):
                    self._receive(self._decode(line))
        except (OSError, ValueError):
            pass  # the pipe broke: as good as the process ending
        finally:
            self.ended = True
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(TransportError("the server process ended"))

    def _decode(self, line: bytes) -> Any:
        """One line's message; while a request that passes results on is in flight, a
        large answer's members are kept as their bytes for it (``passed``), and read for
        any other."""
        if not self.passing:
            return jsonrpc.decode(line)
        message = passthrough.decode(line)
        with contextlib.suppress(TypeError):  # an unhashable id answers nothing
            if type(message) is dict and message.get("id") in self.passing:
                return message
        return jsonrpc.decode_passthrough(message)

    def _receive(self, message: Any) -> None:
        if not isinstance(message, dict):
            return
        if "method" in message and "id" in message:
            task = asyncio.ensure_future(self._answer(message))
            self.answering.add(task)
            task.add_done_callback(self.answering.discard)
            return
        if "method" in message:
            self._route(message)
            return
        with contextlib.suppress(TypeError):  # an unhashable id answers nothing
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)

    async def _answer(self, request: dict[str, Any]) -> None:
        reply = unanswerable(request) if self.on_request is None else await self.on_request(request)
        if reply is None:  # the server cancelled it: no answer is sent
            return
        with contextlib.suppress(TransportError, ConnectionError):
            await self.send(reply)

    def _route(self, note: dict[str, Any]) -> None:
        """stdio shares one stream. A listen stream's messages go to that stream only,
        progress to the request holding its token, anything else once to each distinct
        callback, however many requests in flight share it; with none, to the
        session's own callback."""
        raw = note.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        token: Any = None
        if SUBSCRIPTION_ID in meta:
            token = ("subscription", meta[SUBSCRIPTION_ID])
        elif note.get("method") == "notifications/cancelled":
            # On stdio the server ends a listen stream this way, naming the listen's id.
            token = ("subscription", params.get("requestId"))
        elif note.get("method") == "notifications/progress":
            token = params.get("progressToken")
        told: list[OnNotification] = []
        for callback, own_token in list(self.listeners):
            if token is not None and own_token != token:
                continue
            if token is None and isinstance(own_token, tuple):
                continue
            inner = callback.inner if isinstance(callback, _Counted) else callback
            if not any(inner is seen for seen in told):
                told.append(inner)
                callback(note)
        if not told:
            self.on_unsolicited(note)

    async def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one line to the server's stdin, starting the process if
        it is not running; ``TransportError`` once it has ended."""
        process = await self._start()
        if process.stdin is None or process.stdin.is_closing() or self.ended:
            raise TransportError("the server process ended")
        try:
            async with self.lock:
                process.stdin.write(jsonrpc.encode(message) + b"\n")
                await process.stdin.drain()
        except (ConnectionError, OSError) as exc:
            raise TransportError(f"the server process ended ({exc})") from None

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        """``send`` the message; stdio has no headers."""
        await self.send(message)

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """Send ``message`` and wait for the response with its id; if the wait is
        cancelled, tell the server with ``notifications/cancelled``."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[message["id"]] = future
        meta = (message.get("params") or {}).get("_meta") or {}
        listener = (_Counted(on_notification, future, self.limits), meta.get("progressToken"))
        self.listeners.append(listener)
        try:
            await self.send(message)
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(TransportError):
                await self.send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": message["id"], "reason": "cancelled"},
                    }
                )
            raise
        finally:
            self.listeners.remove(listener)
            self.pending.pop(message["id"], None)

    async def request_passing(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """``request``, a complete result's large members kept as their bytes."""
        self.passing.add(message["id"])
        try:
            return await self.request(message, headers, on_notification)
        finally:
            self.passing.discard(message["id"])

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Send the listen request and yield its stream's notifications, then its response
        if one comes; a ``notifications/cancelled`` of the server's naming it ends the
        stream too (basic/patterns/cancellation.mdx). Closed before either, it sends
        ``notifications/cancelled`` itself."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[message["id"]] = future
        mine = message["id"]

        ended = False

        def route(note: dict[str, Any]) -> None:
            params = note.get("params") or {}
            meta = params.get("_meta") or {}
            cancelled = note.get("method") == "notifications/cancelled"
            if meta.get(SUBSCRIPTION_ID) == mine or (cancelled and params.get("requestId") == mine):
                queue.put_nowait(note)

        self.listeners.append((route, ("subscription", mine)))
        try:
            await self.send(message)
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, future}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    item = getter.result()
                    if item.get("method") == "notifications/cancelled":
                        ended = True  # the server ended it: nothing to tell it back
                        return
                    yield item
                    continue
                getter.cancel()
                yield future.result()
                return
        finally:
            self.listeners.remove((route, ("subscription", mine)))
            self.pending.pop(mine, None)
            if not future.done() and not ended:
                with contextlib.suppress(TransportError, ConnectionError):
                    await self.send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": mine},
                        }
                    )

    async def begin_session(self, headers: Mapping[str, str]) -> None:
        """Nothing to open: the one pipe already carries everything."""

    async def end_session(self, headers: Mapping[str, str]) -> None:
        """Nothing to end: closing stdin ends the process and its session."""

    async def restart(self) -> None:
        """A fresh process: a legacy server may have exited on the modern probe."""
        await self.close()

    async def close(self) -> None:
        """Close stdin and give the child ``close_grace`` seconds to exit, then SIGTERM
        and as long again, then SIGKILL (basic/lifecycle.mdx, stdio shutdown); the read
        loop and any answers in progress are stopped, however the server behaves."""
        process = self.process
        if process is None:
            return
        self.process = None
        if process.stdin is not None:
            process.stdin.close()
        for stop in (None, process.terminate, process.kill):
            if stop is not None:
                with contextlib.suppress(ProcessLookupError):
                    stop()
            try:
                async with asyncio.timeout(self.limits.close_grace):
                    await process.wait()
                break
            except TimeoutError:
                continue
        tasks = [*self.answering, *([self.reader] if self.reader is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.reader = None
        self.ended = False


class _Counted:
    """A request's notification callback that fails the request (``LimitExceeded``)
    once the server has sent it more than ``max_notifications``."""

    def __init__(
        self, inner: OnNotification, future: asyncio.Future[Any], limits: ClientLimits
    ) -> None:
        self.inner = inner
        self.future = future
        self.cap = limits.max_notifications
        self.heard = 0

    def __call__(self, note: dict[str, Any]) -> None:
        self.heard += 1
        if self.heard <= self.cap:
            self.inner(note)
        elif not self.future.done():
            self.future.set_exception(LimitExceeded(f"more than {self.cap} notifications"))


async def _lines(stdout: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The lines of ``stdout`` until it ends; a line beyond the stream's limit is
    skipped whole (its head and its tail), never buffered beyond the limit."""
    skipping = False
    while True:
        try:
            line = await stdout.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if end.partial and not skipping:
                yield end.partial
            return
        except asyncio.LimitOverrunError as over:
            dropped = await stdout.readexactly(over.consumed)
            skipping = not dropped.endswith(b"\n")
            continue
        if skipping:
            skipping = False
            continue
        yield line
