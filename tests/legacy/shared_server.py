"""A server for legacy sessions shared by several workers (tests/scaleout).

    SNODO_LEGACY_STORE=redis://... SNODO_NOTIFY=redis://... SNODO_WORKER=a \
        snodo run tests/legacy/shared_server.py:server --transport http --port PORT

Every answer names the worker that gave it (``SNODO_WORKER``), so a test can tell where
each request of a session landed. ``SNODO_LEGACY_MAX_SESSIONS`` and
``SNODO_LEGACY_PER_PRINCIPAL`` lower the session bounds.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

from snodo import Ask, Server, elicitation
from snodo.core.context import Context
from snodo.server import LegacyLimits
from snodo.server.notify_bus import notification_bus

WORKER = os.environ.get("SNODO_WORKER", "?")

server = Server(
    "shared",
    "1.0.0",
    legacy=LegacyLimits(
        store=os.environ.get("SNODO_LEGACY_STORE") or None,
        max_sessions=int(os.environ.get("SNODO_LEGACY_MAX_SESSIONS") or 1024),
        max_sessions_per_principal=int(os.environ.get("SNODO_LEGACY_PER_PRINCIPAL") or 64),
    ),
    notifications=notification_bus(os.environ.get("SNODO_NOTIFY") or "memory:"),
)
CITY = elicitation.form(
    "Which city?",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@server.tool
def whoami() -> str:
    """The worker that answered."""
    return WORKER


@server.tool
def weather(city: Annotated[str | None, Ask(CITY, pick="city")]) -> str:
    """Asks the user for a city (a bridged elicitation in a legacy session)."""
    return f"sunny in {city} (worker {WORKER})"


@server.tool
def touch(uri: str) -> str:
    """Says ``uri`` changed, from this worker."""
    server.notify_resource_updated(uri)
    return WORKER


CANCELLED: list[str] = []
"""The calls of ``linger`` cancelled in this worker."""


@server.tool
async def linger(ctx: Context) -> str:
    """Reports progress, then waits until cancelled."""
    ctx.report_progress(1)
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        CANCELLED.append(str(ctx.request_id))
        raise
    return WORKER


@server.tool
def cancelled_here() -> str:
    """The worker and the ids of the ``linger`` calls cancelled in it."""
    return f"{WORKER}: {','.join(CANCELLED)}"


@server.resource("note://shared", mime_type="text/plain")
def note() -> str:
    """A resource a session may subscribe to."""
    return f"read on worker {WORKER}"
