"""Skills through a gateway: ``proxy`` and ``mount`` pass a server's skills on.

A backend that declares the skills extension has the declaration passed to the front
(``directoryRead`` as the backend says), and ``skills/list``, ``skills/get`` and, when
declared, ``resources/directory/read`` forwarded; a skill's files are resources, read
like any other. The front's methods are registered when the backend has started and
said what it offers (``declare``).

Mounted under a prefix, a member's ``skill://`` URIs take the prefix as their first
segment: ``skill://git-workflow/SKILL.md`` is served as
``skill://docs/git-workflow/SKILL.md``, in its entries, its resource lists, its reads
and its directory reads, and a request for it goes to the member with the URI the
member knows. Only URIs change, never bytes, so each digest and size stays true, and a
skill's name (the last segment of its path) stays its own. A member that does not
declare the extension keeps its ``skill://`` URIs as they are: to it they are
ordinary resources.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from snodo.core.context import Context
from snodo.revisions.skills.protocol import EXTENSION_ID
from snodo.server import Server
from snodo.server.extensions import ExtensionMethod

__all__ = [
    "EXTENSION_ID",
    "METHODS",
    "declare",
    "declared",
    "prefixed",
    "prefixed_entry",
    "prefixed_result",
    "unprefixed",
]

SCHEME: Final = "skill://"
METHODS: Final = ("skills/list", "skills/get")
DIRECTORY_READ: Final = "resources/directory/read"

Forward = Callable[[Context, Mapping[str, Any]], Any]
"""Answers a skills method for the front: the backend's ``forward``."""


def declared(capabilities: Mapping[str, Any]) -> dict[str, Any] | None:
    """The skills settings a server's capabilities declare, or None."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(EXTENSION_ID) if isinstance(extensions, Mapping) else None
    return dict(settings) if isinstance(settings, Mapping) else None


def declare(server: Server, settings: Mapping[str, Any], forward: Forward) -> None:
    """Offer the skills extension at ``server`` with ``settings``, its methods answered
    by ``forward`` (a ``directoryRead`` the settings leave out is not offered)."""
    registry = server.registry
    registry.extensions[EXTENSION_ID] = dict(settings)
    methods = [*METHODS, *([DIRECTORY_READ] if settings.get("directoryRead") else [])]
    for method in methods:
        registry.extension_methods[method] = ExtensionMethod(method, None, _handler(forward))
    if not settings.get("directoryRead"):
        registry.extension_methods.pop(DIRECTORY_READ, None)


def _handler(forward: Forward) -> Callable[[Context, Mapping[str, Any]], Any]:
    async def answer(ctx: Context, params: Mapping[str, Any]) -> Any:
        return await forward(ctx, {k: v for k, v in params.items() if k != "_meta"})

    return answer


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
