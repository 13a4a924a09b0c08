"""The ASGI lifespan protocol: run the server's start-up and shut-down around serving.

Start-up finishes before the first request is taken, and shut-down before the server
is told it may stop, so the server's lifespans (``snodo.server.lifespan``) and its
notification bus (``snodo.server.notify_bus``) open and close inside the process's life,
leaving no task behind. A start-up that fails is one ``snodo:`` line on stderr and
``lifespan.startup.failed``: the ASGI server exits before any request is taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from types import FrameType
from typing import Any

from snodo.server.lifespan import StartupFailed, describe

__all__ = ["lifespan", "on_stop_signal", "running", "second_signal", "stop_at_once"]

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


@contextlib.asynccontextmanager
async def running(startup: Step, shutdown: Step) -> AsyncIterator[None]:
    """The same start-up and shut-down as a context manager, for a host framework that
    runs its own lifespan around a mounted app (``HttpApp.lifespan``)."""
    await startup()
    try:
        yield
    finally:
        await shutdown()


def on_stop_signal(callback: Callable[[], object]) -> Callable[[], None]:
    """Run ``callback`` on the event loop as soon as SIGTERM or SIGINT arrives, then
    whatever handled the signal before (the ASGI server's own shutdown).

    The ASGI server begins its shutdown on the signal but tells the app only once every
    connection has closed, and a ``subscriptions/listen`` stream never closes by itself:
    this lets the server end those streams gracefully first, so the shutdown can go on.
    A second signal ends the process at once (``stop_at_once``), whatever is still
    running. Only where a Python handler is installed, in the main thread (uvicorn's
    case). Returns what puts the previous handlers back (where ours is still in place).
    """
    installed: list[tuple[int, Any, Any]] = []
    seen: list[int] = []

    def restore() -> None:
        for signum, previous, ours in installed:
            if signal.getsignal(signum) is ours:
                signal.signal(signum, previous)

    if threading.current_thread() is not threading.main_thread():
        return restore
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)
        if not callable(previous):
            continue  # the default: the process ends at once, streams and all

        def handler(
            sig: int, frame: FrameType | None, previous: Callable[..., Any] = previous
        ) -> None:
            if second_signal(seen, sig):
                stop_at_once(sig)
            seen.append(sig)
            with contextlib.suppress(RuntimeError):  # a loop already closed
                loop.call_soon_threadsafe(callback)
            previous(sig, frame)

        signal.signal(signum, handler)
        installed.append((signum, previous, handler))
    return restore


def second_signal(seen: list[int], sig: int) -> bool:
    """Whether ``sig``, after the stop signals ``seen``, asks to stop at once: any after
    a first one, except a SIGTERM that follows only SIGINTs (a terminal's Ctrl-C reaches
    every worker, then uvicorn's supervisor sends each of them SIGTERM as well)."""
    if sig == signal.SIGTERM:
        return signal.SIGTERM in seen
    return bool(seen)


def stop_at_once(sig: int) -> None:
    """End the process now, with one line: a graceful shutdown already runs, and whoever
    sent another signal wants it over (status 128 + the signal's number)."""
    with contextlib.suppress(Exception):
        print("snodo: a second signal: stopping at once", file=sys.stderr, flush=True)
        sys.stdout.flush()
    os._exit(128 + sig)
