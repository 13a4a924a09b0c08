"""stdio: newline-delimited JSON-RPC on stdin and stdout (basic/transports/stdio.mdx).

Requests are answered concurrently, each in its own task, so a slow tool does not hold
up the next line. Only protocol messages go to stdout; logs go to stderr. A line that
is not JSON gets -32700 and the server keeps reading. ``notifications/cancelled``
cancels the named request (no answer is sent for it) or closes the named listen
stream. End of input ends the server once the requests in flight are answered.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

from snodo import jsonrpc
from snodo.errors import ParseError
from snodo.server import Server
from snodo.subscriptions import Subscription

__all__ = ["serve_stdio"]

log = logging.getLogger("snodo.stdio")

MAX_LINE_BYTES = 4 * 1024 * 1024
OVERSIZED = b"\x00"
"""Stands in for a line over MAX_LINE_BYTES: not JSON, so it is answered with -32700."""


class _Session:
    def __init__(self, server: Server, output: BinaryIO) -> None:
        self.server = server
        self.output = output
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        self.listening: dict[Any, Subscription] = {}

    def write(self, message: dict[str, Any]) -> None:
        self.output.write(jsonrpc.encode(message) + b"\n")
        self.output.flush()

    async def answer(self, request_id: Any, message: Any) -> None:
        try:
            reply = await self.server.handle(message, transport="stdio", emit=self.write)
        finally:
            self.tasks.pop(request_id, None)
        if reply.subscription is not None:
            self.listening[request_id] = reply.subscription
        elif reply.response is not None:
            self.write(reply.response)

    def cancel(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        task = self.tasks.pop(request_id, None)
        if task is not None:
            task.cancel()
        subscription = self.listening.pop(request_id, None)
        if subscription is not None:
            self.server.close_subscription(subscription)

    def receive(self, line: bytes) -> None:
        try:
            message = jsonrpc.decode(line)
        except ParseError as exc:
            self.write(jsonrpc.error_response(None, exc))
            return
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            self.cancel(message.get("params"))
            return
        request_id = message.get("id") if isinstance(message, dict) else None
        task = asyncio.ensure_future(self.answer(request_id, message))
        if isinstance(request_id, (str, int)) and request_id not in self.tasks:
            self.tasks[request_id] = task
        else:
            self.tasks[object()] = task

    async def close(self) -> None:
        for subscription in self.listening.values():
            self.server.close_subscription(subscription)
        if self.tasks:
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """Complete lines; an over-long line is skipped and reported as unparsable."""
    buffer = b""
    skipping = False
    while chunk := await reader.read(65536):
        buffer += chunk
        while (end := buffer.find(b"\n")) >= 0:
            line, buffer = buffer[:end], buffer[end + 1 :]
            if skipping or len(line) > MAX_LINE_BYTES:
                skipping = False
                yield OVERSIZED
            elif line.strip():
                yield line
        if len(buffer) > MAX_LINE_BYTES:
            buffer, skipping = b"", True
    if skipping:
        yield OVERSIZED
    elif buffer.strip():
        yield buffer


async def serve_stdio(
    server: Server, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> None:
    """Serve until stdin reaches end of file."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), stdin or sys.stdin.buffer
    )
    session = _Session(server, stdout or sys.stdout.buffer)
    # Only protocol messages may reach stdout: a stray print() in a handler goes to stderr.
    original, sys.stdout = sys.stdout, sys.stderr
    try:
        async for line in _lines(reader):
            session.receive(line)
        await session.close()
    finally:
        sys.stdout = original
