"""An extension through a gateway: how a front server offers what the servers behind it
declare of an extension (the gateway's public extension API).

A gateway (``proxy``, ``mount``, ``serve_group``) forwards the core's feature methods
and takes none of the extensions its servers declare: an extension passes only by a
gateway half of its own, a ``Passing`` given to the gateway
(``proxy(connect, passing=[...])``, ``mount(server, other, prefix=..., passing=[...])``).
Each time the servers behind have started, ``started`` hears each of them (by the
prefix it is mounted under; ``""`` for a proxy's one backend) and declares the
extension at the front as they declare it.

``Passing(id)`` alone suits an extension whose traffic is the feature methods (MCP
Apps: its views are resources, its app-only tools are tools); an extension with methods
of its own subclasses it and registers the front's methods in ``started``. One whose
URIs say which mounted server they belong to (Skills: ``skill://PREFIX/...``) says so
through ``served_uri`` (a member's URI as the front lists, checks and reads it) and
``route`` (the member a served URI goes to), which a mounting front asks before its
own routing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from snodo.core.context import Context
from snodo.core.result import InputRequired

if TYPE_CHECKING:
    from snodo.server import Server

__all__ = ["Member", "Passing", "declared", "halves"]


class Member(Protocol):
    """What a gateway half reads of a server behind the front (``Proxy`` is one)."""

    def capabilities(self) -> Mapping[str, Any]:
        """The server's capabilities, as it last advertised them."""
        ...

    async def forward(
        self, ctx: Context, params: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        """Answer ``ctx.request_method`` with ``params`` there."""
        ...

    async def listing(self, ctx: Context | None, method: str, key: str) -> list[Any]:
        """Every page of a list method's ``key`` items there."""
        ...


def declared(capabilities: Mapping[str, Any], extension_id: str) -> dict[str, Any] | None:
    """The settings with which ``capabilities`` declare an extension, or None."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(extension_id) if isinstance(extensions, Mapping) else None
    return dict(settings) if isinstance(settings, Mapping) else None


class Passing:
    """An extension at a gateway's front, offered as the servers behind declare it."""

    def __init__(self, extension_id: str) -> None:
        self.id = extension_id

    def started(self, front: Server, members: Mapping[str, Member]) -> None:
        """The servers behind ``front`` have started (or started again): declare the
        extension there with the settings of the first that declares it, or not at all
        when none does."""
        found = (declared(member.capabilities(), self.id) for member in members.values())
        settings = next((s for s in found if s is not None), None)
        if settings is None:
            front.registry.extensions.pop(self.id, None)
        else:
            front.registry.extensions[self.id] = settings

    def served_uri(self, prefix: str, capabilities: Mapping[str, Any], uri: str) -> str:
        """A resource URI of the member mounted under ``prefix``, which declares
        ``capabilities``, as the front serves it: as it is, unless the extension names
        it otherwise."""
        return uri

    def route(self, uri: str) -> tuple[str, str] | None:
        """The member (by prefix) a URI the front serves belongs to, and the URI that
        member knows; None when the extension does not name it."""
        return None


def halves(given: Iterable[Passing], kept: dict[str, Passing] | None = None) -> dict[str, Passing]:
    """The gateway halves by extension, ``kept`` ones first: one per extension."""
    chosen = dict(kept or {})
    for half in given:
        chosen.setdefault(half.id, half)
    return chosen
