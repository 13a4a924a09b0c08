"""A server whose calls log and report progress while they wait, for the proxy's
per-front-request notification tests (``snodo run tests/gateway/noisy_server.py:server``,
over stdio behind ``snodo proxy``)."""

from __future__ import annotations

import asyncio

from snodo import Server
from snodo.core.context import Context

__all__ = ["server"]

server = Server("noisy", "1.0.0")
released: dict[str, asyncio.Event] = {}


def _gate(tag: str) -> asyncio.Event:
    return released.setdefault(tag, asyncio.Event())


@server.tool
async def hold(tag: str, ctx: Context) -> str:
    """Logs and reports ``tag`` on starting, waits for ``release(tag)``, then logs and
    reports it again."""
    ctx.log("info", f"{tag} start")
    ctx.report_progress(1, message=tag)
    await _gate(tag).wait()
    ctx.log("info", f"{tag} end")
    ctx.report_progress(2, message=tag)
    return tag


@server.tool
def release(tag: str) -> str:
    """Lets ``hold(tag)`` finish."""
    _gate(tag).set()
    return "released"
