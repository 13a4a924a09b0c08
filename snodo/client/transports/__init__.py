"""How a Client reaches a server: in memory, over Streamable HTTP, or over stdio.

Each transport sends one JSON-RPC request and returns its response, handing every
notification that arrives for it (progress, log messages, listen-stream messages) to
``on_notification`` as it comes.

``base`` (what a transport is, and its errors), ``http`` (with ``sse_reader``),
``stdio``, and ``MemoryTransport`` here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from snodo.client.transports.base import (
    ClientTransport,
    HttpRefused,
    OnNotification,
    PassingTransport,
    SessionTransport,
    TransportError,
)
from snodo.client.transports.http import HttpTransport
from snodo.client.transports.stdio import StdioTransport
from snodo.core import jsonrpc
from snodo.server import Server

__all__ = [
    "ClientTransport",
    "HttpRefused",
    "HttpTransport",
    "MemoryTransport",
    "PassingTransport",
    "SessionTransport",
    "StdioTransport",
    "TransportError",
]


class MemoryTransport:
    """Straight into a Server's core, in this process: no sockets, no framing.

    The server is started (its lifespans entered) before the first message and shut
    down when the transport closes, as a transport serving it would."""

    def __init__(self, server: Server, principal: str | None = None) -> None:
        self.server = server
        self.principal = principal
        self._started = False

    async def _start(self) -> None:
        if not self._started:
            self._started = True
            await self.server.startup()

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """Hand ``message``, as the wire would carry it, to the server; return its response."""
        wire = json.loads(jsonrpc.encode(message))  # the same bytes a socket would carry
        await self._start()
        reply = await self.server.handle(wire, principal=self.principal, emit=on_notification)
        if reply.response is None:
            raise TransportError("the server sent no response")
        # What a socket would carry: a proxy's kept bytes (``passed``) are read.
        response: dict[str, Any] = jsonrpc.decode_passthrough(reply.response)
        return response

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Hand ``message`` to the server and yield its response, or else the
        subscription's messages until the generator is closed."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        await self._start()
        reply = await self.server.handle(message, principal=self.principal, emit=queue.put_nowait)
        if reply.response is not None:
            yield jsonrpc.decode_passthrough(reply.response)
            return
        try:
            while True:
                yield await queue.get()
        finally:
            if reply.subscription is not None:
                self.server.close_subscription(reply.subscription)

    async def close(self) -> None:
        """Shut the server down if this transport started it."""
        if self._started:
            self._started = False
            await self.server.shutdown()
