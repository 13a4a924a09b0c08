"""Where a host framework mounted an ``HttpApp``, and the routes it needs there.

A Starlette (or FastAPI) ``Mount("/mcp", app)`` passes on ``/mcp/...`` only: the router
answers ``/mcp`` itself with a redirect to ``/mcp/``, which a client's POST does not
follow, and the OAuth documents a client looks for at the host's root (RFC 9728 and
RFC 8414 put the well-known paths before the endpoint's path) never reach the app. The
host hands its lifespan the app it runs (``FastAPI(lifespan=mcp.lifespan)``), so
``HttpApp.lifespan`` gives it to ``route_mounts``, which finds each mount of the app
in the host's routes (nested mounts too) and adds, each only where no route of the
host's answers already:

- before the mount, a route for the mount's own path, answered as the mount's root
  (``root_path`` the mount's path), so ``POST /mcp`` is the endpoint of an app mounted
  at ``/mcp`` with ``path="/"``;
- at the top of the host, before the route that leads to the app, a route for each path
  the app answers outside its mount: the resource metadata, the OAuth proxy's metadata,
  and its endpoints when its ``base_url`` is not the mount's.

Routes the host lists before the mount keep their precedence. Nothing happens for a
host that is not Starlette's (no routes, or Starlette not installed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Mounted", "route_mounts"]

Scope = MutableMapping[str, Any]
Asgi = Callable[[Scope, Any, Any], Awaitable[None]]


@dataclass(frozen=True)
class Mounted:
    """One mount of the app: the path prefix it is reached under, host root to mount."""

    prefix: str


class _AtMount:
    """The mount's own path, answered by the app as the root of its mount."""

    def __init__(self, app: Asgi, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        root = scope.get("root_path", "")
        await self.app({**scope, "root_path": root + self.path}, receive, send)


class _Beside:
    """A path at the host's top that the app answers itself, the request unchanged."""

    def __init__(self, app: Asgi) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def _is(route: Any, app: object) -> bool:
    return getattr(route, "app", None) is app or getattr(route, "_base_app", None) is app


def _answered(routes: Iterable[Any], path: str, full: Any) -> bool:
    """Whether a route of ``routes`` already answers a request for ``path`` whole."""
    probe = {"type": "http", "path": path, "root_path": "", "method": "GET", "headers": []}
    return any(route.matches(probe)[0] is full for route in routes)


def route_mounts(host: object, app: Asgi, outside: Iterable[str]) -> list[Mounted]:
    """Route the host's requests for each mount's own path, and for the ``outside``
    paths, to ``app``; the mounts found (none: not mounted in a Starlette host)."""
    try:
        from starlette.routing import Match, Mount, Route  # noqa: PLC0415 - the host's
    except ModuleNotFoundError:  # not a Starlette host: nothing to add to
        return []
    top = getattr(host, "routes", None)
    if not isinstance(top, list):
        return []
    found: list[Mounted] = []
    leading: list[Any] = []
    """The top-level routes through which the app is reached (a mount of it, or one
    holding a mount of it)."""

    def walk(routes: list[Any], prefix: str, at_top: Any) -> None:
        for route in list(routes):
            if not isinstance(route, Mount):
                continue
            through = route if at_top is None else at_top
            path = prefix + route.path
            if _is(route, app):
                found.append(Mounted(path))
                leading.append(through)
                if route.path and not _answered(routes, route.path, Match.FULL):
                    exact = Route(route.path, _AtMount(app, route.path), include_in_schema=False)
                    routes.insert(routes.index(route), exact)
                continue
            inner = route.routes
            if isinstance(inner, list) and inner:
                walk(inner, path, through)

    walk(top, "", None)
    if not found:
        return found
    first = min(leading, key=top.index)
    for path in sorted(set(outside)):
        if any(path == m.prefix or path.startswith(m.prefix + "/") for m in found):
            continue  # under the mount: the mount takes it there
        if _answered(top, path, Match.FULL):
            continue  # the host answers it (its own document, or a catch-all mount)
        beside = Route(path, _Beside(app), include_in_schema=False)
        top.insert(top.index(first), beside)
    return found
