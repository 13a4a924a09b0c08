"""Several servers served as one: the server's own items and its mounted members'.

Names: a member's tools and prompts are served as ``PREFIX_NAME`` (``weather`` and
``forecast`` make ``weather_forecast``). A prefix is letters, digits, ``-`` and ``.``,
without ``_``, so the first ``_`` of a served name ends its prefix and no two members'
names can be confused; a prefixed name still follows the tool-name rules (at most 128
characters, server/tools.mdx). Resource URIs and templates are served as the member
gives them: a read goes to the member that listed the URI, else to the server's own
resources and then to each member in the order they were mounted, the first that
answers without an error answering (servers differ on the code for an unknown
resource), the last error raised when none does. A name or URI that two of them would
serve is refused: at ``mount`` for what is registered then, and when the members start
for what they list.

An extension the members declare is served only by its gateway half
(``snodo.gateway.passing``): a half that names the member in its URIs (Skills'
``skill://PREFIX/...``) routes reads before the rules above and says how a member's
URIs are listed and checked. Lists are the server's own followed by each
member's, whole (each member's pages read through) and paged with the server's
``page_size``; they are marked ``private`` for caches, since a member may list
differently for each client. Each member is a ``Proxy``:
its own rounds, sealed state, checks and questions work as through any proxy.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from snodo.core.context import Context
from snodo.core.errors import InvalidParams, McpError, ResourceNotFound
from snodo.core.result import InputRequired
from snodo.gateway.forwarding import BackendError, Proxy
from snodo.gateway.passing import Passing
from snodo.server.backend import FEATURES
from snodo.server.methods import HANDLERS, ServerOffering
from snodo.server.pagination import page

__all__ = ["SEPARATOR", "Composite", "check_prefix", "served_name"]

SEPARATOR: Final = "_"
"""Between a member's prefix and its tool or prompt name: ``weather_forecast``."""
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,63}")
_LISTS: Final = {
    "tools/list": ("tools", "name"),
    "prompts/list": ("prompts", "name"),
    "resources/list": ("resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate"),
}
Kind = Literal["tools", "prompts", "resources", "resourceTemplates"]


def check_prefix(prefix: str) -> str:
    """``prefix`` when it is one (letters, digits, ``-``, ``.``; no ``_``), else ValueError."""
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise ValueError(
            f"prefix {prefix!r}: 1 to 64 of A-Z, a-z, 0-9, '-' and '.', starting with a"
            " letter or digit (no '_': it separates the prefix from the name)"
        )
    return prefix


def served_name(prefix: str, name: str) -> str:
    """A member's tool or prompt name as the server serves it."""
    served = f"{prefix}{SEPARATOR}{name}"
    if len(served) > 128:
        raise ValueError(f"{served!r} is longer than the 128 characters a tool name may have")
    return served


class Composite:
    """The ``Backend`` of a server with mounted members: routes each request to the
    server's own items or to the member its name or URI belongs to."""

    def __init__(self, own: ServerOffering) -> None:
        # Copies, not ``replace``: that would run ``ServerOffering.__post_init__`` again and hook
        # the task engine's listeners a second time.
        self.own = copy.copy(own)
        self.own.serve_backend(None)
        self.own.search_with(None)  # the server's search is in front of all, members too
        """The server's own items, answered by the core's handlers."""
        self.own_whole = copy.copy(self.own)
        self.own_whole.page_size = None
        """The same, listed whole (the merged list is paged once, by the server)."""
        self.members: dict[str, Proxy] = {}
        self.uris: dict[str, str] = {}
        """Resource URI and template -> the prefix of the member that lists it."""
        self.passing: dict[str, Passing] = {}
        """The gateway halves of the extensions passed on, by identifier."""

    def add(self, prefix: str, member: Proxy, names: Mapping[Kind, list[str]]) -> None:
        """Mount ``member`` under ``prefix``; ``names`` are what it serves now (checked
        for collisions against the server's own items and the other members')."""
        check_prefix(prefix)
        if prefix in self.members:
            raise ValueError(f"prefix {prefix!r} is already mounted")
        self.members[prefix] = member
        member.label = prefix
        member.served_uri = lambda uri: self.served_uri(prefix, member.capabilities(), uri)
        try:
            self.check(prefix, names)
        except ValueError:
            del self.members[prefix]
            raise

    def check(self, prefix: str, names: Mapping[Kind, list[str]]) -> None:
        """Refuse names and URIs of ``prefix``'s member that another would serve too."""
        taken = self._taken(skip=prefix)
        named: tuple[Kind, ...] = ("tools", "prompts")
        for kind in named:
            for name in names.get(kind, []):
                served = served_name(prefix, name)
                if served in taken[kind]:
                    raise ValueError(f"{kind[:-1]} {served!r} would be served twice")
        own_names = taken["tools"] | taken["prompts"]
        clash = sorted(name for name in own_names if name.startswith(f"{prefix}{SEPARATOR}"))
        if clash:  # a served name must say whose it is
            raise ValueError(f"{clash[0]!r} is the server's own, and starts with {prefix!r}_")
        located: tuple[Kind, ...] = ("resources", "resourceTemplates")
        found: list[str] = []
        for kind in located:
            for uri in names.get(kind, []):
                owner = self.uris.get(uri)
                if uri in taken[kind] or (owner is not None and owner != prefix):
                    raise ValueError(f"resource {uri!r} would be served twice")
                found.append(uri)
        for uri in found:  # only once every check has passed
            self.uris[uri] = prefix

    def _taken(self, skip: str) -> dict[str, set[str]]:
        registry = self.own.registry
        taken: dict[str, set[str]] = {
            "tools": set(registry.tools),
            "prompts": set(registry.prompts),
            "resources": set(registry.resources),
            "resourceTemplates": {t.definition["uriTemplate"] for t in registry.templates},
        }
        for uri, owner in self.uris.items():
            if owner != skip:
                taken["resources"].add(uri)
                taken["resourceTemplates"].add(uri)
        return taken

    # -- Backend ------------------------------------------------------------------------

    def capabilities(self) -> Mapping[str, Any]:
        offered: dict[str, Any] = {
            key: value for key, value in self.own.registry.capabilities().items() if key in FEATURES
        }
        for member in self.members.values():
            for feature in FEATURES:
                theirs = member.capabilities().get(feature)
                if isinstance(theirs, Mapping):
                    merged = dict(offered.get(feature) or {})
                    for key, value in theirs.items():
                        merged[key] = merged.get(key) or value
                    offered[feature] = merged
        return offered

    async def forward(
        self, ctx: Context, params: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        method = ctx.request_method
        if method in _LISTS:
            return await self._list(ctx, params)
        outcome: dict[str, Any] | InputRequired
        if method in ("tools/call", "prompts/get"):
            registry = self.own.registry
            mine = registry.tools if method == "tools/call" else registry.prompts
            prefix, name = self._member_of(params.get("name"))
            if prefix is None or params.get("name") in mine:  # the server's own first
                outcome = await self._own(ctx, params)
            else:
                outcome = await self.members[prefix].forward(ctx, {**params, "name": name})
        elif method == "completion/complete":
            outcome = await self._complete(ctx, params)
        else:
            outcome = await self._read(ctx, params)
        return outcome

    def _member_of(self, name: Any) -> tuple[str | None, Any]:
        if isinstance(name, str) and SEPARATOR in name:
            prefix, _, inner = name.partition(SEPARATOR)
            if prefix in self.members:
                return prefix, inner
        return None, name

    async def _own(self, ctx: Context, params: Mapping[str, Any]) -> Any:
        outcome: Any = await HANDLERS[ctx.request_method](self.own, ctx, params)
        return outcome

    async def _list(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        key, field = _LISTS[ctx.request_method]
        items: list[Any] = []
        private = False
        if self.own.registry.offers(ctx.request_method):
            mine: Any = await HANDLERS[ctx.request_method](self.own_whole, ctx, {})
            items += mine[key]
            private = mine.get("cacheScope") == "private"
        for prefix, member in self.members.items():
            if not member.serves(ctx.request_method):
                continue
            theirs = await member.listing(ctx, ctx.request_method, key)
            for item in theirs:
                if field == "name":
                    items.append({**item, "name": served_name(prefix, item["name"])})
                else:
                    served = self.served_item(prefix, member, item, field)
                    self.uris.setdefault(served[field], prefix)
                    items.append(served)
        chosen, next_cursor = page(
            items, ctx.request_method, params.get("cursor"), self.own.page_size
        )
        result: dict[str, Any] = {key: list(chosen)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        if private or self.members:  # a member's list may be this client's alone
            result["cacheScope"] = "private"
        return result

    async def _read(self, ctx: Context, params: Mapping[str, Any]) -> Any:
        uri = params.get("uri")
        routed = self.route(uri) if isinstance(uri, str) else None
        if routed is not None:  # a URI an extension names a member by
            named, inner = routed
            member = self.members[named]
            result = await member.forward(ctx, {**params, "uri": inner})
            if not isinstance(result, dict) or not isinstance(result.get("contents"), list):
                return result
            contents = [self.served_item(named, member, c, "uri") for c in result["contents"]]
            return {**result, "contents": contents}
        owner = self.uris.get(uri) if isinstance(uri, str) else None
        data = ctx.state_data if isinstance(ctx.state_data, Mapping) else {}
        if data.get("via") in self.members:  # a retry: back to the member that asked
            owner = data["via"]
        if owner is not None:
            return await self.members[owner].forward(ctx, params)
        tried: McpError = ResourceNotFound(str(uri))
        candidates: list[str | None] = [None, *self.members]
        for prefix in candidates:
            try:
                if prefix is None:
                    if not self.own.registry.offers("resources/read"):
                        continue
                    return await self._own(ctx, params)
                if self.members[prefix].serves("resources/read"):
                    return await self.members[prefix].forward(ctx, params)
            except (ResourceNotFound, BackendError) as missing:
                tried = missing  # servers differ on the code for "no such resource"
        raise tried

    async def _complete(self, ctx: Context, params: Mapping[str, Any]) -> Any:
        ref = params.get("ref")
        if not isinstance(ref, Mapping):
            raise InvalidParams("Invalid params: ref")
        if ref.get("type") == "ref/prompt":
            prefix, name = self._member_of(ref.get("name"))
            if prefix is not None:
                inner = {**params, "ref": {**ref, "name": name}}
                return await self.members[prefix].forward(ctx, inner)
        elif isinstance(ref.get("uri"), str) and ref["uri"] in self.uris:
            return await self.members[self.uris[ref["uri"]]].forward(ctx, params)
        return await self._own(ctx, params)

    # -- the extensions' gateway halves (snodo.gateway.passing) ----------------------------

    def served_uri(self, prefix: str, capabilities: Mapping[str, Any], uri: str) -> str:
        """A URI of the member mounted under ``prefix`` as the server serves it."""
        for half in self.passing.values():
            uri = half.served_uri(prefix, capabilities, uri)
        return uri

    def served_item(self, prefix: str, member: Proxy, item: Any, field: str) -> Any:
        """A member's listed resource or read contents as served: its URI as the
        extensions' halves serve it."""
        uri = item.get(field) if isinstance(item, dict) and field == "uri" else None
        if not isinstance(uri, str):
            return item
        served = self.served_uri(prefix, member.capabilities(), uri)
        return item if served == uri else {**item, "uri": served}

    def route(self, uri: str) -> tuple[str, str] | None:
        """The member a served URI belongs to by an extension's naming, and its own URI."""
        for half in self.passing.values():
            routed = half.route(uri)
            if routed is not None and routed[0] in self.members:
                return routed
        return None
