"""stdio: newline-delimited JSON-RPC on stdin and stdout (basic/transports/stdio.mdx).

Requests are answered concurrently, each in its own task, so a slow tool does not hold
up the next line. Only protocol messages go to stdout; logs go to stderr. A line that
is not JSON gets -32700 and the server keeps reading. ``notifications/cancelled``
cancels the named request (no answer is sent for it) or closes the named listen
stream. End of input ends the server once the requests in flight are answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, BinaryIO

from snodo.core import jsonrpc
from snodo.core.errors import ParseError
from snodo.core.types import OpenStream
from snodo.legacy.stdio import StdioEra
from snodo.server import Server
from snodo.transports.lifespan import second_signal, stop_at_once

__all__ = ["serve_stdio"]

log = logging.getLogger("snodo.stdio")

MAX_LINE_BYTES = 4 * 1024 * 1024
OVERSIZED = b"\x00"
"""Stands in for a line over MAX_LINE_BYTES: not JSON, so it is answered with -32700."""


class _Session:
    """What one stdin/stdout pair has in flight, and nothing more.

    Every task for a line read is in ``running`` until it ends, so end of input waits
    for all of them; a request's task is also filed under its id for
    ``notifications/cancelled``, several tasks under one id when a peer reuses it. Both
    entries go when the task ends: nothing is kept per message once it is answered.
    """

    def __init__(self, server: Server, output: BinaryIO) -> None:
        self.server = server
        self.output = output
        self.output_closed = False
        """The client closed its end of stdout: nothing more can reach it."""
        self.running: set[asyncio.Task[None]] = set()
        self.by_id: dict[str | int, set[asyncio.Task[None]]] = {}
        self.listening: dict[Any, OpenStream] = {}
        self.era = StdioEra(server, self.write)

    def write(self, message: dict[str, Any]) -> None:
        if self.output_closed:
            return
        try:
            self.output.write(jsonrpc.encode(message) + b"\n")
            self.output.flush()
        except BrokenPipeError:
            self._lost_output()

    def _lost_output(self) -> None:
        """Said once; the answers after it are dropped, and stdout is pointed at
        /dev/null so that the bytes still buffered do not fail again at exit."""
        self.output_closed = True
        log.warning("stdout was closed by the client: later answers are dropped")
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.output.fileno())
            os.close(devnull)

    async def answer(self, request_id: Any, message: Any) -> None:
        reply = await self.era.handle(message, self.write)
        if reply.subscription is not None:
            self.listening[request_id] = reply.subscription
        elif reply.response is not None:
            self.write(reply.response)

    def cancel(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        if not isinstance(request_id, (str, int)):
            return
        for task in self.by_id.get(request_id, ()):
            task.cancel()
        subscription = self.listening.pop(request_id, None)
        if subscription is not None:
            self.server.close_subscription(subscription)

    def _start(self, request_id: str | int | None, message: Any) -> None:
        task = asyncio.ensure_future(self.answer(request_id, message))
        self.running.add(task)
        if request_id is not None:
            self.by_id.setdefault(request_id, set()).add(task)
        task.add_done_callback(lambda done: self._finished(request_id, done))

    def _finished(self, request_id: str | int | None, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        if request_id is not None and (same := self.by_id.get(request_id)) is not None:
            same.discard(task)
            if not same:
                del self.by_id[request_id]

    def receive(self, line: bytes) -> None:
        try:
            message = jsonrpc.decode(line)
        except ParseError as exc:
            self.write(jsonrpc.error_response(None, exc))
            return
        if self.era.take(message):
            return
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            self.cancel(message.get("params"))
            return
        raw_id = message.get("id") if isinstance(message, dict) else None
        usable = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
        self._start(raw_id if usable else None, message)

    async def close(self, stopped: asyncio.Event, grace: float | None) -> None:
        """Answer what is in flight: all of it at end of input, unless a stop signal
        came or comes, when ``grace`` seconds more are given (None: no bound) and then
        what still runs is cancelled."""
        self.era.close()  # nothing the client was asked can be answered now
        drained = asyncio.ensure_future(self._drain())
        signalled = asyncio.ensure_future(stopped.wait())
        try:
            await asyncio.wait({drained, signalled}, return_when=asyncio.FIRST_COMPLETED)
            if not drained.done() and grace is not None:
                await asyncio.wait({drained}, timeout=grace)
                if not drained.done():
                    log.warning(
                        "%d request(s) still running %s s after the stop signal: cancelled",
                        len(self.running),
                        grace,
                    )
                    for task in self.running:
                        task.cancel()
            await drained
        finally:
            signalled.cancel()
        for subscription in self.listening.values():
            subscription.end()  # the listen request's completion result: a graceful end
            self.server.close_subscription(subscription)

    async def _drain(self) -> None:
        while self.running:
            await asyncio.gather(*self.running, return_exceptions=True)


class _Stops:
    """SIGTERM and SIGINT while serving (on the main thread's loop only): the first sets
    ``stopped`` and calls ``first``, a second ends the process at once (as over HTTP,
    ``snodo.transports.lifespan``)."""

    def __init__(self) -> None:
        self.stopped = asyncio.Event()
        self.first: Callable[[], object] = _nothing
        self.seen: list[int] = []
        self.loop = asyncio.get_running_loop()
        self.installed: list[int] = []
        for number in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self.loop.add_signal_handler(number, self._signal, number)
                self.installed.append(number)

    def _signal(self, number: int) -> None:
        if second_signal(self.seen, number):
            stop_at_once(number)
        self.seen.append(number)
        if not self.stopped.is_set():
            log.info("signal %d: answering what is in flight, then stopping", number)
            self.stopped.set()
            self.first()

    def remove(self) -> None:
        for number in self.installed:
            self.loop.remove_signal_handler(number)


def _nothing() -> None:
    return None


Read = Callable[[], Awaitable[bytes]]
"""The next chunk of input; empty at end of input."""

CHUNK_BYTES = 65536


async def _lines(read: Read) -> AsyncIterator[bytes]:
    """Complete lines; an over-long line is skipped and reported as unparsable.

    Each byte is searched for a newline once and copied out once, however the input is
    cut into chunks and lines."""
    buffer = bytearray()
    scanned = 0
    skipping = False
    while chunk := await read():
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", scanned)) >= 0:
            line = bytes(buffer[start:end])
            start = scanned = end + 1
            if skipping or len(line) > MAX_LINE_BYTES:
                skipping = False
                yield OVERSIZED
            elif line.strip():
                yield line
        del buffer[:start]
        scanned = len(buffer)
        if len(buffer) > MAX_LINE_BYTES:
            buffer.clear()
            scanned, skipping = 0, True
    if skipping:
        yield OVERSIZED
    elif buffer.strip():
        yield bytes(buffer)


async def _reader(stream: BinaryIO) -> Read:
    """How to read ``stream`` without blocking the event loop.

    Pipes, sockets and terminals are watched by the loop. A regular file or /dev/null
    (``snodo run ... < requests.jsonl``) cannot be: the loop refuses files, and a
    readiness poll on /dev/null never fires. Those never block for long, so they are
    read in a worker thread instead.
    """
    mode = os.fstat(stream.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and stream.isatty()):
        reader = asyncio.StreamReader()
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), stream
        )
        return lambda: reader.read(CHUNK_BYTES)
    fd = stream.fileno()
    return lambda: asyncio.to_thread(os.read, fd, CHUNK_BYTES)


async def serve_stdio(
    server: Server,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    *,
    grace: float | None = None,
) -> None:
    """Serve until stdin reaches end of file (or SIGTERM or SIGINT stops the reading),
    then answer what is in flight, shut the server down and return. After a stop signal
    what runs gets ``grace`` seconds more (None: no bound), then it is cancelled; a
    second signal ends the process at once.

    The server is started first (its lifespans and notification bus): one that fails to
    start raises here, before any message is read."""
    read = await _reader(stdin or sys.stdin.buffer)
    session = _Session(server, stdout or sys.stdout.buffer)
    # Only protocol messages may reach stdout: a stray print() in a handler goes to stderr.
    original, sys.stdout = sys.stdout, sys.stderr
    stops = _Stops()
    try:
        await server.startup()  # the lifespans, and the bus when it reaches other workers
        await _read_until_stopped(read, session, stops)
        await session.close(stops.stopped, grace)
    finally:
        sys.stdout = original
        try:
            await server.shutdown()
        finally:
            stops.remove()


async def _read_until_stopped(read: Read, session: _Session, stops: _Stops) -> None:
    """Hand each line to the session until end of file, or a stop signal."""

    async def receive_all() -> None:
        async for line in _lines(read):
            session.receive(line)

    if stops.stopped.is_set():  # a signal came while the server started
        return
    reading = asyncio.ensure_future(receive_all())
    stops.first = reading.cancel
    try:
        await reading
    except asyncio.CancelledError:
        if not stops.stopped.is_set():
            raise
    finally:
        stops.first = _nothing
