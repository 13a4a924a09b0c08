"""The ASGI lifespan protocol: run the server's start-up and shut-down around serving.

Start-up finishes before the first request is taken, and shut-down before the server
is told it may stop, so the server's lifespans (``snodo.server.lifespan``) and its
notification bus (``snodo.server.notify_bus``) open and close inside the process's life,
leaving no task behind. A start-up that fails is one ``snodo:`` line on stderr and
``lifespan.startup.failed``: the ASGI server exits before any request is taken.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from snodo.server.lifespan import StartupFailed, describe

__all__ = ["lifespan"]

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Step = Callable[[], Awaitable[None]]


async def lifespan(receive: Receive, send: Send, startup: Step, shutdown: Step) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await startup()
            except Exception as exc:
                # One line, the server's own; the ASGI server then exits, non-zero.
                why = str(exc) if isinstance(exc, StartupFailed) else describe(exc)
                print(f"snodo: the server did not start: {why}", file=sys.stderr)
                await send({"type": "lifespan.startup.failed", "message": why})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return
