"""What ``snodo run --workers N`` checks in the parent before any worker starts.

Each worker builds its own Server, and uvicorn's workers share one listening socket:
which worker takes a connection is the kernel's choice, so nothing can route a legacy
client's next request to the worker holding its session. Sessions kept in a worker's
memory (the default) then break on a later request (404, "Session terminated"), so
that is refused, naming the ways out, unless ``--unshared-legacy-sessions`` says the
operator knows (no legacy client will come, say). An OAuth proxy keeping its sign-ins
or its signing key in one process is refused too: a code minted by one worker would be
unknown to the next, so no sign-in could be relied on. So is a server whose handlers can
ask the client while its replay guard is one process's own (the default
``MemoryGuard``): a final retry replayed to another worker would run its handler again,
unless ``--unshared-replay-guard`` says the operator accepts that.
"""

from __future__ import annotations

from snodo.core.state.replay import MemoryGuard
from snodo.server import Server

__all__ = ["GUARD_OPT_OUT", "OPT_OUT", "unshared_guard", "unshared_legacy", "unshared_sign_ins"]

OPT_OUT = "--unshared-legacy-sessions"
GUARD_OPT_OUT = "--unshared-replay-guard"


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


def unshared_sign_ins(server: Server, workers: int) -> str | None:
    """Why ``workers`` processes cannot share ``server``'s OAuth sign-ins, or None."""
    found = None if workers < 2 or server.authorization is None else server.authorization.unshared()
    if found is None:
        return None
    return (
        f"--workers {workers}: the OAuth proxy {found}, so a code one worker minted would be"
        " unknown to another. Share them: store=SQLiteProxyStore('proxy.db') or"
        " RedisProxyStore('redis://...') (snodo.auth.proxy_store), and secret=... or"
        " SNODO_AUTH_SECRET the same in every worker"
    )


def unshared_guard(server: Server, workers: int) -> str | None:
    """Why ``workers`` processes cannot keep ``server``'s request state one-time, or None."""
    if workers < 2 or not isinstance(server.keyring.guard, MemoryGuard):
        return None
    asking = server.asking()
    if not asking:
        return None  # nothing it serves seals state to replay
    return (
        f"--workers {workers}: {asking[0]} can ask the client, and the replay guard that"
        " makes its request state one-time is each worker's own (the default"
        " State.guard), so a final retry replayed to another worker would run it again."
        " Share it: Server(state=State(guard=SQLiteGuard('state.db'))) on one host,"
        " RedisGuard('redis://...') across hosts (snodo.stores); opt out in the code:"
        f" Server(state=State(guard=False)); or start anyway with {GUARD_OPT_OUT}"
    )
