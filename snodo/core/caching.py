"""Caching hints: the ``ttlMs`` and ``cacheScope`` a cacheable result carries
(server/utilities/caching.mdx), for the server's lists and reads, for one list, or for
one resource or template's reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["LISTS", "NO_CACHE", "CacheHint", "hints"]


@dataclass(frozen=True, slots=True)
class CacheHint:
    """How long a client may reuse a result (``ttl_ms``, 0: not at all) and who may share
    it (``"private"``: only the principal that asked; ``"public"``: anyone)."""

    ttl_ms: int = 0
    scope: Literal["public", "private"] = "private"

    def __post_init__(self) -> None:
        if isinstance(self.ttl_ms, bool) or not isinstance(self.ttl_ms, int) or self.ttl_ms < 0:
            raise ValueError("ttl_ms must be a whole number of milliseconds, 0 or more")
        if self.scope not in ("public", "private"):
            raise ValueError("scope must be 'public' or 'private'")


NO_CACHE = CacheHint()
"""Not to be reused: ``ttlMs`` 0, ``private``."""

LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
"""The list methods a per-list hint may name."""


def hints(
    lists: CacheHint | Mapping[str, CacheHint], read: CacheHint, discover: CacheHint
) -> dict[str, CacheHint]:
    """The hint of each cacheable method: ``lists`` one for all lists or one per list
    method (the others: ``NO_CACHE``); ValueError for a method that is not a list."""
    by_method = {"server/discover": discover, "resources/read": read}
    if isinstance(lists, CacheHint):
        by_method.update(dict.fromkeys(LISTS, lists))
        return by_method
    for method, hint in lists.items():
        if method not in LISTS:
            raise ValueError(f"Caching(lists=...): {method!r} is not one of {', '.join(LISTS)}")
        if not isinstance(hint, CacheHint):
            raise TypeError(f"Caching(lists=...)[{method!r}]: must be a CacheHint")
    by_method.update({method: lists.get(method, NO_CACHE) for method in LISTS})
    return by_method
