"""Who a request's caller is, for what the server keeps per caller across requests.

A modern request carries no session: what belongs to a caller is keyed by the principal
the transport authenticated. A legacy session's requests reach the core through the
bridge, which names the session in ``LEGACY_SESSION`` for the rounds it runs (a context
variable: nothing a client sends can set it), so an anonymous legacy client's things
are its session's. Over stdio or in memory there is one client, the local one. An
anonymous modern request over HTTP is nobody in particular: nothing is kept for it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from snodo.core.context import PEER_ADDRESS, Context

__all__ = ["LEGACY_SESSION", "LOCAL", "address_of", "caller_of"]

LEGACY_SESSION: ContextVar[str | None] = ContextVar("snodo_legacy_session", default=None)
"""The legacy session whose request the bridge is answering through the core."""

LOCAL: Final = "local"
"""The one client of a stdio or in-memory server, when it has no principal."""

_ONE_CLIENT: Final = frozenset({"stdio", "memory"})


def caller_of(ctx: Context) -> str | None:
    """The key of the caller's own things: ``p:`` and its principal, else ``s:`` and its
    legacy session, else ``local`` over stdio or in memory; None for an anonymous
    modern request over HTTP."""
    if ctx.principal is not None:
        return "p:" + ctx.principal
    session = LEGACY_SESSION.get()
    if session is not None:
        return "s:" + session
    if ctx.transport in _ONE_CLIENT:
        return LOCAL
    return None


def address_of(ctx: Context) -> str | None:
    """The client's network address, where the transport knows it (HTTP)."""
    del ctx  # the transport sets it for the task, not in the context
    return PEER_ADDRESS.get()
