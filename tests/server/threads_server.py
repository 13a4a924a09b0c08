"""A server whose sync tool blocks, for the thread tests over a real process:
``python -m snodo run tests/server/threads_server.py:server --transport http``."""

from __future__ import annotations

import threading
import time

from snodo import Server

server = Server("threads", "1.0.0")


@server.tool
def slow(seconds: float) -> str:
    """Blocks its thread, as a database driver or ``requests`` would."""
    time.sleep(seconds)
    return "slept"


@server.tool
def where() -> str:
    return threading.current_thread().name


@server.tool(inline=True)
def where_inline() -> str:
    return threading.current_thread().name
