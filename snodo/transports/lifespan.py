"""The ASGI lifespan protocol: run the server's start-up and shut-down around serving.

Start-up finishes before the first request is taken, and shut-down before the server
is told it may stop, so the notification bus (``snodo.server.notify_bus``) connects and
disconnects inside the process's life, leaving no task behind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["lifespan"]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Step = Callable[[], Awaitable[None]]


async def lifespan(receive: Receive, send: Send, startup: Step, shutdown: Step) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await startup()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return
