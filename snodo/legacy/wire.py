"""The legacy wire: which revisions count as legacy, and results in their shape.

2025-11-25 (and 2025-06-18, 2025-03-26, served with the same models, as the official
SDKs do) negotiate a version once with ``initialize`` and carry no per-request
``_meta`` envelope. Results there have no ``resultType``, no caching hints and no
``serverInfo`` stamp: ``legacy_result`` takes those off what the modern core built.
"""

from __future__ import annotations

from typing import Any, Final

from snodo_wire.protocol import META_PROTOCOL_VERSION
from snodo_wire.protocol import META_SERVER_INFO as SERVER_INFO

__all__ = [
    "FORWARDED",
    "LATEST",
    "VERSIONS",
    "is_initialize",
    "is_modern",
    "legacy_result",
    "negotiate",
]

VERSIONS: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18", "2025-03-26")
"""Legacy revisions served, newest first (basic/lifecycle.mdx of 2025-11-25)."""
LATEST: Final = VERSIONS[0]

FORWARDED: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)
"""Legacy methods whose meaning the modern core already has: they are answered by it."""

_MODERN_ONLY_KEYS: Final = ("resultType", "ttlMs", "cacheScope")


def is_modern(message: Any) -> bool:
    """A message carrying the per-request ``_meta`` of 2026-07-28 and later."""
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def is_initialize(message: Any) -> bool:
    """A legacy initialize request. One with modern ``_meta`` is a modern client asking
    for a method its revision removed: the core answers that one (-32601)."""
    return (
        isinstance(message, dict)
        and message.get("method") == "initialize"
        and "id" in message
        and not is_modern(message)
    )


def negotiate(requested: object) -> str:
    """The version to answer an initialize with: the client's if served, else the latest."""
    return requested if isinstance(requested, str) and requested in VERSIONS else LATEST


def legacy_result(result: dict[str, Any]) -> dict[str, Any]:
    """A complete modern result as the legacy revisions shape it."""
    out = {key: value for key, value in result.items() if key not in _MODERN_ONLY_KEYS}
    meta = out.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO in meta:
        rest = {key: value for key, value in meta.items() if key != SERVER_INFO}
        if rest:
            out["_meta"] = rest
        else:
            del out["_meta"]
    return out
