"""The bounds of the legacy era: what one initialize-based client may make a server keep.

A modern request leaves nothing behind on the server. A legacy session
does: its negotiated version, its capabilities, its subscriptions and the requests the
server has sent it and still waits on. Each of those is bounded here, and a ``Server``
carries one ``LegacyLimits`` (or None, which makes it modern-only).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from snodo.core.context import LOG_LEVELS

__all__ = ["LegacyLimits"]


@dataclass(frozen=True, slots=True, repr=False)
class LegacyLimits:
    """What one legacy (initialize-based) client may make the server keep; every bound
    must be positive."""

    max_sessions: int = 1024
    """Legacy HTTP sessions one process keeps at once; an initialize beyond it gets 503."""
    max_sessions_per_principal: int = 64
    """Legacy HTTP sessions one principal (unauthenticated: one client address) keeps at
    once; an initialize beyond it ends that principal's longest idle session (503 when
    none of them is idle), so one client cannot take every place of ``max_sessions``.
    With a shared ``store`` they are counted there, across workers, and the principal's
    least recently used session ends, wherever it is held."""
    max_batch: int = 64
    """Messages one JSON-RPC batch may carry (revisions with batches); beyond it, -32600."""
    max_running: int = 1000
    """Legacy requests one process handles at once over HTTP, each member of a batch
    counted as one request; beyond it, 503 with a JSON-RPC error."""
    idle_timeout: float = 1800.0
    """Seconds a legacy HTTP session may go unused before it is forgotten (then 404)."""
    max_pending_requests: int = 16
    """Server-to-client requests one session may have waiting for an answer."""
    max_rounds: int = 10
    """Input-required rounds the bridge runs for one legacy request before giving up."""
    round_timeout: float = 300.0
    """Seconds the bridge waits for the client's answers to one round's requests."""
    max_subscriptions: int = 1024
    """Resource URIs one legacy session may subscribe to."""
    max_stream_events: int = 256
    """Events kept per SSE stream of a session, for a client that resumes it with
    ``Last-Event-ID``; an older event cannot be replayed."""
    store: str | None = None
    """Where HTTP sessions live: None or ``memory:``, this process (route each session to
    the worker that made it); ``redis://HOST:PORT/DB``, a store every worker shares, so
    any worker answers any session (``snodo.legacy.store``)."""
    stateless: bool = False
    """Keep no sessions at all: each legacy POST stands alone, with no GET stream and no
    server-to-client requests (``snodo.legacy.stateless``). ``Server(legacy="stateless")``."""
    log_level: str | None = "info"
    """The least severe log message a session gets before it sends ``logging/setLevel``.
    The legacy revision leaves it to the server (clients *may* set a level, so a server
    that logs sends messages without one); ``"info"`` sends what a handler logs short of
    debug detail. None sends nothing until the client asks."""

    def __post_init__(self) -> None:
        for name in self.__slots__:
            value = getattr(self, name)
            if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
                raise ValueError(f"LegacyLimits.{name} must be positive")
        if self.stateless and self.store is not None:
            raise ValueError("LegacyLimits: a stateless server keeps no session store")
        if self.log_level is not None and self.log_level not in LOG_LEVELS:
            raise ValueError(f"LegacyLimits.log_level must be one of {', '.join(LOG_LEVELS)}")

    def __repr__(self) -> str:
        """What differs from the defaults only: ``LegacyLimits()`` for the defaults."""
        changed = (
            f"{each.name}={getattr(self, each.name)!r}"
            for each in fields(self)
            if getattr(self, each.name) != each.default
        )
        return f"LegacyLimits({', '.join(changed)})"
