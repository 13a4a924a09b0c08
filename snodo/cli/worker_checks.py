"""What ``snodo run --workers N`` checks in the parent before any worker starts.

Each worker builds its own Server, and uvicorn's workers share one listening socket:
which worker takes a connection is the kernel's choice, so nothing can route a legacy
client's next request to the worker holding its session. Sessions kept in a worker's
memory (the default) then break on a later request (404, "Session terminated"), so
that is refused, naming the ways out, unless ``--unshared-legacy-sessions`` says the
operator knows (no legacy client will come, say).
"""

from __future__ import annotations

from snodo.server import Server

__all__ = ["OPT_OUT", "unshared_legacy"]

OPT_OUT = "--unshared-legacy-sessions"


def unshared_legacy(server: Server, workers: int) -> str | None:
    """Why ``workers`` processes cannot serve ``server``'s legacy sessions, or None."""
    limits = server.legacy
    if workers < 2 or limits is None or limits.stateless:
        return None
    if limits.store not in (None, "memory:", "memory://"):
        return None  # shared: any worker answers any session
    return (
        f"--workers {workers} would keep each legacy (initialize) session in one worker's"
        " memory, and a client's next request may reach another worker (404, 'Session"
        " terminated'). Share them: Server(legacy=LegacyLimits(store='redis://...'))"
        " (examples/preferences.py reads it from SNODO_LEGACY_STORE); keep none:"
        " Server(legacy='stateless'); serve modern clients only: Server(legacy=None); or"
        f" start anyway with {OPT_OUT}"
    )
