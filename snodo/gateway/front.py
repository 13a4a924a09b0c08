"""Who a proxy's front client is, for its fair share of the calls the proxy holds open.

A legacy backend's call stays open in the proxy while it waits for the front's answer
(``snodo.gateway.open_calls``), and the proxy holds a bounded number of them; each front
client may hold only a share, so that one which opens calls and never answers cannot
take them all. A front client is its principal where the transport authenticates, else
the address it connects from: snodo's HTTP transport reads no address, so the proxy's
ASGI app is wrapped by ``knowing_peers``, which puts it in ``PEER`` for the request.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from typing import Any

from snodo.core.context import Context
from snodo.server import Server

__all__ = ["GATEWAYS", "PEER", "front_client", "knowing_peers"]

PEER: ContextVar[str | None] = ContextVar("snodo_gateway_peer", default=None)
"""The address (host) the HTTP request being answered came from."""

GATEWAYS: weakref.WeakSet[Server] = weakref.WeakSet()
"""The servers that hold backend calls for their front clients (``proxy``,
``serve_group``): ``snodo run`` serves them through ``knowing_peers``."""

Asgi = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


def knowing_peers(app: Any) -> Asgi:
    """``app`` with each HTTP request's client address in ``PEER`` (the address uvicorn
    gives, the proxy's own when behind one without ``--proxy-headers``)."""

    async def with_peer(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        client = scope.get("client") if scope.get("type") == "http" else None
        if not client:
            await app(scope, receive, send)
            return
        token = PEER.set(str(client[0]))
        try:
            await app(scope, receive, send)
        finally:
            PEER.reset(token)

    return with_peer


def front_client(ctx: Context) -> str:
    """The front client ``ctx`` came from: its principal, else its address, else the one
    client of a stdio front (or of an app served without ``knowing_peers``)."""
    if ctx.principal is not None:
        return f"principal:{ctx.principal}"
    peer = PEER.get()
    return "anonymous" if peer is None else f"address:{peer}"
