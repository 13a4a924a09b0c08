"""One legacy request over POST, answered as JSON, or as SSE once something must go to
the client before the answer (progress, log messages, the bridge's questions).

An SSE answer is resumable (``snodo.legacy.events``): it opens with a priming event, and
each event carries an id and goes to the stream's log, the answer last, then the end.
``resume`` is the other end: the stream sent again to a client that names its last
event (``Last-Event-ID``), from whichever worker runs the request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from snodo.core import jsonrpc
from snodo.core.errors import InvalidRequest, retry_after
from snodo.legacy.events import EventLog
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.replies import (
    Receive,
    Send,
    empty,
    json_reply,
    plain,
    sse_event,
    sse_prime,
    sse_start,
    unavailable,
    wait_disconnect,
)
from snodo.legacy.session import LegacySession
from snodo.legacy.shared import Entry
from snodo.legacy.store import StoreUnavailable

__all__ = ["Post", "resume"]

log = logging.getLogger("snodo.legacy")


class Post:
    """One legacy request over POST: JSON, or SSE once something goes out before it."""

    def __init__(
        self,
        kernel: LegacyKernel,
        entry: Entry,
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
        self.changed: Callable[[LegacySession, str], Awaitable[None]] | None = None
        """Writes what the request changed to a shared store, once it succeeded."""
        self.log: EventLog | None = None
        """Where the SSE stream's events go, for a client that resumes it."""
        self.stream = "p" + secrets.token_urlsafe(9)
        self.seq = 0
        self._unwritten: list[tuple[int, dict[str, Any] | None]] = []
        self._writing: asyncio.Future[None] | None = None
        """Writes the events to a remote log behind the stream, in order and several at
        once, so the client never waits on the log."""

    def _emit(self, note: dict[str, Any]) -> None:
        self.queue.put_nowait(note)
        if self.sender is None:
            self.sender = asyncio.ensure_future(self._stream())

    async def _stream(self) -> None:
        await sse_start(self.send)
        if self.log is not None:
            await self._logged(0, {})  # the stream exists from its priming event on
            await sse_prime(self.send, f"{self.stream}.0")
        while (note := await self.queue.get()) is not None:
            await self._event(note)

    async def _event(self, message: dict[str, Any]) -> None:
        if self.log is None:
            await sse_event(self.send, message)
            return
        self.seq += 1
        await self._logged(self.seq, message)
        await sse_event(self.send, message, f"{self.stream}.{self.seq}")

    async def _logged(self, seq: int, message: dict[str, Any] | None) -> None:
        """Keep the event for a resuming client: at once in memory, behind the stream
        for a remote log (a resuming reader polls it)."""
        assert self.log is not None
        self._unwritten.append((seq, message))
        if self.log.immediate:
            await self._write()
        elif self._writing is None or self._writing.done():
            self._writing = asyncio.ensure_future(self._write())

    async def _write(self) -> None:
        """Write what is waiting, batch by batch; a log that is down costs only the
        resumption."""
        assert self.log is not None
        while self._unwritten:
            events, self._unwritten = self._unwritten, []
            try:
                await self.log.extend(self.entry.session.id, self.stream, events)
            except StoreUnavailable:
                log.warning("legacy: events of stream %s were not logged", self.stream)

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
        if self.changed is not None and response is not None and "result" in response:
            try:
                await self.changed(self.entry.session, str(self.message.get("method")))
            except StoreUnavailable:
                error = InvalidRequest("the session store did not keep the change: send it again")
                response = jsonrpc.error_response(request_id, error)
        if self.sender is not None:
            self.queue.put_nowait(None)
            await self.sender
            if response is not None:
                await self._event(response)
            if self.log is not None:
                await self._logged(self.seq + 1, None)
            await self.send({"type": "http.response.body", "body": b"", "more_body": False})
        elif response is not None:
            wait = retry_after(response) if "error" in response else None
            extra = () if wait is None else ((b"retry-after", b"%d" % wait),)
            await json_reply(self.send, 200, response, extra)
        else:
            await empty(self.send, 202)


async def resume(
    events: EventLog, session: str, where: tuple[str, int], receive: Receive, send: Send
) -> None:
    """A POST's SSE stream, resumed: the events after the one named, then the rest as
    they come (from whichever worker runs the request), its answer last."""
    replay = events.replay(session, *where)
    try:
        first = await anext(replay, None)
    except LookupError:
        await plain(send, 400, b"that stream's events are no longer kept")
        return
    except StoreUnavailable as exc:
        await unavailable(send, str(exc))
        return
    await sse_start(send)
    watcher = asyncio.ensure_future(wait_disconnect(receive))
    try:
        item = first
        while item is not None and item[1] is not None:
            await sse_event(send, item[1], f"{where[0]}.{item[0]}")
            following = asyncio.ensure_future(anext(replay, None))
            await asyncio.wait({following, watcher}, return_when="FIRST_COMPLETED")
            if not following.done():
                following.cancel()
                break  # the client went away again
            item = following.result()
    except StoreUnavailable:
        pass  # the client may resume again
    finally:
        watcher.cancel()
        await replay.aclose()
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
