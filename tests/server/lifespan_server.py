"""A server with two lifespans that note when they open and close, for the lifespan tests
through the real command line. ``LIFESPAN_LOG`` names the file they write; with
``LIFESPAN_FAIL`` set, the first one fails to open."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from snodo import Context, Server


def note(event: str) -> None:
    with Path(os.environ["LIFESPAN_LOG"]).open("a") as log:
        log.write(f"{event} {os.getpid()}\n")


class Pool:
    """What a database pool would be: opened once per worker process."""

    def __init__(self) -> None:
        self.worker = os.getpid()


@asynccontextmanager
async def pool(server: Server) -> AsyncIterator[Pool]:
    note("open pool")
    if os.environ.get("LIFESPAN_FAIL"):
        raise RuntimeError("database unreachable")
    try:
        yield Pool()
    finally:
        note("close pool")


@asynccontextmanager
async def settings(server: Server) -> AsyncIterator[str]:
    note("open settings")
    yield f"settings of {server.info['name']}"
    note("close settings")


server = Server("lifespans", "1.0.0", lifespan=[pool, settings])


@server.tool
def which(ctx: Context) -> str:
    """The worker whose pool served this call, and the settings beside it."""
    return f"{ctx.lifespan_as(Pool).worker} {ctx.lifespan_as(str)}"
