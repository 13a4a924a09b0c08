"""``mount(server, other, prefix="weather")``: serve another server inside this one.

``other`` is a ``Server`` (served in process through an in-memory client, so its own
lifespans, middleware, sealed state and checks stay its own) or a function that makes
a client to any server, as ``proxy`` takes. Its tools and prompts are served as
``weather_NAME``, its resources and templates as they are, save the URIs an
extension's gateway half given to ``mount`` names the member in (Skills' ``skill://``
URIs, served as ``skill://weather/...``: ``snodo.gateway.passing``; the rules:
``snodo.gateway.composite``); a collision with what is
served already is refused here, or, for a server reached by a client, when the server
starts and the member lists what it has. The member's list changes reach the server's
listeners.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.gateway.composite import Composite, Kind
from snodo.gateway.forwarding import PROXIES, Connect, Proxy
from snodo.gateway.passing import Passing, halves
from snodo.gateway.shaping import Shape
from snodo.server import Server

__all__ = ["composite_of", "mount"]

_KINDS: tuple[tuple[Kind, str], ...] = (
    ("tools", "tools/list"),
    ("prompts", "prompts/list"),
    ("resources", "resources/list"),
    ("resourceTemplates", "resources/templates/list"),
)


def composite_of(server: Server) -> Composite:
    """The server's ``Composite`` backend, made (with the lifespan that starts its
    members) the first time."""
    backend = server.offering.backend
    if isinstance(backend, Composite):
        return backend
    if backend is not None or server in PROXIES:
        raise ValueError("this server already serves another server's features (a proxy)")
    composite = Composite(server.offering)
    server.offering.serve_backend(composite)

    @asynccontextmanager
    async def members(started: Server) -> AsyncIterator[None]:
        begun: list[Proxy] = []
        try:
            for prefix, member in composite.members.items():
                await member.start(started)
                begun.append(member)
                composite.check(prefix, await _names(composite, prefix, member))
            for half in composite.passing.values():  # as the members declare them
                half.started(started, composite.members)
            yield
        finally:
            for member in reversed(begun):
                await member.stop()

    server.lifespans.add(members)
    return composite


def mount(
    server: Server,
    other: Server | Connect,
    *,
    prefix: str,
    shape: Shape | None = None,
    passing: Iterable[Passing] = (),
    **client_options: Any,
) -> None:
    """Serve ``other`` inside ``server`` under ``prefix``; ``shape`` filters, renames and
    reshapes what is taken of it (``snodo.gateway.shaping``, before the prefix);
    ``client_options`` go to the client that reaches it (``Client`` options: limits,
    deadline, era, ...). ``passing``: gateway halves (``snodo.gateway.passing``) of
    extensions the mounted servers may declare that ``server`` passes on, beside those
    of earlier mounts."""
    if other is server:
        raise ValueError("a server cannot be mounted inside itself")
    composite = composite_of(server)
    composite.passing = halves(passing, composite.passing)
    names: dict[Kind, list[str]] = {}
    if isinstance(other, Server):
        mounted = other

        def connect(**options: Any) -> Client:
            return Client(MemoryTransport(mounted), **{**client_options, **options})

        registry = other.registry
        offered = registry.capabilities()
        names = {
            "tools": list(registry.tools),
            "prompts": list(registry.prompts),
            "resources": [composite.served_uri(prefix, offered, u) for u in registry.resources],
            "resourceTemplates": [t.definition["uriTemplate"] for t in registry.templates],
        }
        if shape is not None:
            names = {kind: shape.names(kind, found) for kind, found in names.items()}
        composite.add(prefix, Proxy(connect, shape=shape), names)
    else:
        composite.add(prefix, Proxy(other, shape=shape), names)


async def _names(composite: Composite, prefix: str, member: Proxy) -> dict[Kind, list[str]]:
    """What a started member serves, by kind, for the collision check (its resources'
    URIs as they are served)."""
    found: dict[Kind, list[str]] = {}
    offered = member.capabilities()
    for kind, method in _KINDS:
        if member.serves(method):
            field = "name" if kind in ("tools", "prompts") else "uri"
            field = "uriTemplate" if kind == "resourceTemplates" else field
            listed = await member.listing(None, method, kind)
            names = [item[field] for item in listed]
            if kind == "resources":
                names = [composite.served_uri(prefix, offered, name) for name in names]
            found[kind] = names
    return found
