"""Skills through a gateway (its gateway half, ``SkillsPassing``): ``proxy`` and
``mount`` given ``passing=[skills.passed()]`` pass a server's skills on.

A backend that declares the skills extension has the declaration passed to the front
(``directoryRead`` as the backend says), and ``skills/list``, ``skills/get`` and, when
declared, ``resources/directory/read`` forwarded; a skill's files are resources, read
like any other. The front's methods are registered when the backend has started and
said what it offers (``started``).

Mounted under a prefix, a member's ``skill://`` URIs take the prefix as their first
segment: ``skill://git-workflow/SKILL.md`` is served as
``skill://docs/git-workflow/SKILL.md``, in its entries, its resource lists, its reads
and its directory reads, and a request for it goes to the member with the URI the
member knows. Only URIs change, never bytes, so each digest and size stays true, and a
skill's name (the last segment of its path) stays its own. A member that does not
declare the extension keeps its ``skill://`` URIs as they are: to it they are
ordinary resources. A mounting server's own skills (``Skills`` offered at it) are
served beside its members': its listing first, then theirs; ``directoryRead`` only
when every source of skills reads directories. A resource of the server's own under a
skills member's ``skill://PREFIX/`` would be unreachable: ``ValueError`` at start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.gateway.passing import Member, Passing, declared
from snodo.revisions.skills.protocol import EXTENSION_ID
from snodo.server import Server
from snodo.server.extensions import ExtensionMethod
from snodo.server.pagination import page

__all__ = [
    "EXTENSION_ID",
    "METHODS",
    "SkillsPassing",
    "prefixed",
    "prefixed_entry",
    "prefixed_result",
    "unprefixed",
]

SCHEME: Final = "skill://"
METHODS: Final = ("skills/list", "skills/get")
"""The extension's own methods, which the front answers by its members."""
DIRECTORY_READ: Final = "resources/directory/read"

MethodAnswer = Callable[[Context, Mapping[str, Any]], Any]
"""What answers one of the extension's methods at the front."""


def _offer(front: Server, settings: Mapping[str, Any], answers: Mapping[str, MethodAnswer]) -> None:
    """Declare the extension at ``front`` with ``settings``, its methods answered by
    ``answers`` (a ``directoryRead`` the settings leave out is not offered)."""
    registry = front.registry
    registry.extensions[EXTENSION_ID] = dict(settings)
    methods = [*METHODS, *([DIRECTORY_READ] if settings.get("directoryRead") else [])]
    for method in methods:
        registry.extension_methods[method] = ExtensionMethod(method, None, answers[method])
    if not settings.get("directoryRead"):
        registry.extension_methods.pop(DIRECTORY_READ, None)


def _forwarded(member: Member) -> MethodAnswer:
    async def answer(ctx: Context, params: Mapping[str, Any]) -> Any:
        return await member.forward(ctx, {k: v for k, v in params.items() if k != "_meta"})

    return answer


class SkillsPassing(Passing):
    """The Skills extension at a gateway's front (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(EXTENSION_ID)
        self.members: dict[str, Member] = {}
        """The mounted members declaring skills, by prefix."""
        self.own: dict[str, Any] = {}
        """The mounting server's own skills methods, when it has skills of its own."""
        self.own_settings: dict[str, Any] | None = None
        self.own_known = False
        self.front: Server | None = None

    def started(self, front: Server, members: Mapping[str, Member]) -> None:
        """Offer the skills of the servers behind ``front`` that declare them."""
        self.front = front
        backend = members.get("")
        if backend is not None:  # a proxy: its one backend's skills, as they are
            settings = declared(backend.capabilities(), EXTENSION_ID)
            if settings is not None:
                _offer(
                    front, settings, dict.fromkeys((*METHODS, DIRECTORY_READ), _forwarded(backend))
                )
            return
        found = {p: (m, declared(m.capabilities(), EXTENSION_ID)) for p, m in members.items()}
        self.members = {p: m for p, (m, settings) in found.items() if settings is not None}
        if not self.members:
            return
        registry = front.registry
        for prefix in self.members:  # skill://PREFIX/... is the member's
            taken = sorted(u for u in registry.resources if unprefixed(u, {prefix: None}))
            if taken:
                raise ValueError(
                    f"{taken[0]!r} is the server's own, and skill://{prefix}/ is the skills"
                    f" of the server mounted as {prefix!r}"
                )
        if not self.own_known:  # the first start: the server's own skills, if any
            self.own_known = True
            self.own_settings = declared(registry.capabilities(), EXTENSION_ID)
            if self.own_settings is not None:
                self.own = {
                    method: registry.extension_methods[method]
                    for method in (*METHODS, DIRECTORY_READ)
                    if method in registry.extension_methods
                }
        sources = [settings for _, settings in found.values() if settings is not None]
        if self.own_settings is not None:
            sources.append(self.own_settings)
        directories = all(s.get("directoryRead") for s in sources)
        routed = {
            "skills/list": self._list,
            "skills/get": self._routed,
            DIRECTORY_READ: self._routed,
        }
        _offer(front, {"directoryRead": True} if directories else {}, routed)

    def served_uri(self, prefix: str, capabilities: Mapping[str, Any], uri: str) -> str:
        """A skills member's ``skill://`` URI, prefixed; any other as it is."""
        if prefix and declared(capabilities, EXTENSION_ID) is not None:
            return prefixed(prefix, uri)
        return uri

    def route(self, uri: str) -> tuple[str, str] | None:
        """The skills member a ``skill://PREFIX/...`` URI belongs to, and its own URI."""
        return unprefixed(uri, self.members)

    async def _routed(self, ctx: Context, params: Mapping[str, Any]) -> Any:
        """skills/get or resources/directory/read: a member's skill, else the server's own."""
        method = ctx.request_method
        uri = params.get("uri")
        routed = unprefixed(uri, self.members) if isinstance(uri, str) else None
        if routed is not None:
            prefix, inner = routed
            given = {k: v for k, v in params.items() if k != "_meta"}
            result = await self.members[prefix].forward(ctx, {**given, "uri": inner})
            return prefixed_result(prefix, method, result)
        own = self.own.get(method)
        if own is None:
            if method == DIRECTORY_READ:
                raise InvalidParams(f"{uri} is not a directory resource")
            raise InvalidParams(f"No skill is served at {uri}")
        assert self.front is not None
        return await own(self.front.offering, ctx, params)

    async def _list(self, ctx: Context, params: Mapping[str, Any]) -> dict[str, Any]:
        """skills/list: the server's own skills, then each member's, paged as one."""
        assert self.front is not None
        entries: list[Any] = []
        own = self.own.get("skills/list")
        cursor = None
        for _ in range(100 if own is not None else 0):  # the own listing, every page
            assert own is not None
            mine = await own(self.front.offering, ctx, {} if cursor is None else {"cursor": cursor})
            entries += mine.get("skills") or []
            cursor = mine.get("nextCursor")
            if not isinstance(cursor, str):
                break
        for prefix, member in self.members.items():
            theirs = await member.listing(ctx, "skills/list", "skills")
            entries += [prefixed_entry(prefix, entry) for entry in theirs]
        chosen, next_cursor = page(
            entries, "skills/list", params.get("cursor"), self.front.page_size
        )
        result: dict[str, Any] = {"skills": list(chosen), "ttlMs": 0, "cacheScope": "private"}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result


def prefixed(prefix: str, uri: str) -> str:
    """A member's ``skill://`` URI as the server serves it; any other URI as it is."""
    if uri.startswith(SCHEME):
        return f"{SCHEME}{prefix}/{uri[len(SCHEME) :]}"
    return uri


def unprefixed(uri: str, prefixes: Mapping[str, object]) -> tuple[str, str] | None:
    """The member prefix a served ``skill://`` URI starts with, and the URI the member
    knows; None when it names no member."""
    if not uri.startswith(SCHEME):
        return None
    first, slash, rest = uri[len(SCHEME) :].partition("/")
    if not slash or not rest or first not in prefixes:
        return None
    return first, f"{SCHEME}{rest}"


def prefixed_entry(prefix: str, entry: Any) -> Any:
    """A member's skill entry with its URIs prefixed (digests and sizes as they are)."""
    if not isinstance(entry, Mapping):
        return entry
    out = dict(entry)
    if isinstance(out.get("uri"), str):
        out["uri"] = prefixed(prefix, out["uri"])
    resources = out.get("resources")
    if isinstance(resources, list):
        out["resources"] = [_with_uri(prefix, item) for item in resources]
    return out


def _with_uri(prefix: str, item: Any) -> Any:
    if isinstance(item, Mapping) and isinstance(item.get("uri"), str):
        return {**item, "uri": prefixed(prefix, item["uri"])}
    return item


def prefixed_result(prefix: str, method: str, result: Any) -> Any:
    """A member's answer to ``method`` with its ``skill://`` URIs prefixed: the skills
    of a listing or a get, the resources of a list or directory read, the contents of
    a read."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    if method == "skills/list" and isinstance(out.get("skills"), list):
        out["skills"] = [prefixed_entry(prefix, entry) for entry in out["skills"]]
    elif method == "skills/get" and "skill" in out:
        out["skill"] = prefixed_entry(prefix, out["skill"])
    elif method in ("resources/list", DIRECTORY_READ) and isinstance(out.get("resources"), list):
        out["resources"] = [_with_uri(prefix, item) for item in out["resources"]]
    elif method == "resources/read" and isinstance(out.get("contents"), list):
        out["contents"] = [_with_uri(prefix, item) for item in out["contents"]]
    return out
