"""The client's response cache: results kept as long as the server says they stay fresh.

server/utilities/caching.mdx gives six results caching hints: ``server/discover``, the
four lists and ``resources/read``. A result is kept when its ``ttlMs`` is positive
(absent, zero or negative: stale at once, so never kept), under the method, the server
(``origin``) and the params that choose it (``_meta`` aside: it says how to answer,
not what). A request carrying ``inputResponses`` or ``requestState`` is never looked
up nor kept, nor is a result that is not ``complete``.

``cacheScope``: a ``"public"`` result may be served to any client sharing the cache; a
``"private"`` one (or one that names no scope) only to clients acting for the same
principal: the ``Client``'s ``principal``, or the client itself when it names none, so
a cache shared between the clients of several users never hands one user's private
result to another.

Notifications invalidate at once: a list-changed notification the lists it names, a
resource update the reads of that URI. The cache holds at most ``max_entries``
results and ``max_bytes`` of their JSON, dropping the least recently used first; a
result larger than ``max_bytes`` alone is not kept. Entries are stored as JSON text, so
what a hit returns is a fresh copy no caller can change for the next.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CACHEABLE", "ResponseCache", "cache_key"]

MIB = 1024 * 1024

CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
"""The methods whose complete results carry caching hints (server/utilities/caching.mdx)."""

_LISTS_CHANGED: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
}
"""Which cached lists each list-changed notification makes stale."""

_RETRY_FIELDS = ("inputResponses", "requestState")


def cache_key(method: str, params: Mapping[str, Any]) -> str | None:
    """The params that choose ``method``'s result, as canonical JSON; None when the
    request may not be cached at all (not a cacheable method, or an MRTR retry)."""
    if method not in CACHEABLE or any(field in params for field in _RETRY_FIELDS):
        return None
    chosen = {key: value for key, value in params.items() if key != "_meta"}
    return json.dumps(chosen, sort_keys=True, separators=(",", ":"))


@dataclass(slots=True)
class _Entry:
    text: str
    fresh_until: float
    method: str
    uri: str | None


Key = tuple[Hashable, Hashable, str, str]
"""(origin, principal or None for public, method, params)."""


class ResponseCache:
    """A bounded, least-recently-used cache of results, shared by any clients given it
    (``Client(cache=ResponseCache(...))``); each ``Client`` makes its own by default."""

    def __init__(
        self,
        max_entries: int = 256,
        max_bytes: int = 16 * MIB,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be positive")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.clock = clock
        self.hits = 0
        """Results served from the cache, for those who watch it."""
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self, origin: Hashable, principal: Hashable, method: str, params: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """The fresh result kept for this request, public first, else None."""
        chosen = cache_key(method, params)
        if chosen is None:
            return None
        now = self.clock()
        for scope in (None, principal):
            key = (origin, scope, method, chosen)
            entry = self._entries.get(key)
            if entry is None:
                continue
            if now >= entry.fresh_until:
                self._drop(key)
                continue
            self._entries.move_to_end(key)
            self.hits += 1
            found: dict[str, Any] = json.loads(entry.text)
            return found
        return None

    def put(
        self,
        origin: Hashable,
        principal: Hashable,
        method: str,
        params: Mapping[str, Any],
        result: Mapping[str, Any],
    ) -> None:
        """Keep ``result`` while its ``ttlMs`` says it is fresh, if it may be kept."""
        chosen = cache_key(method, params)
        ttl = result.get("ttlMs")
        if chosen is None or result.get("resultType", "complete") != "complete":
            return
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
            return
        text = json.dumps(result, separators=(",", ":"))
        if len(text) > self.max_bytes:
            return
        scope = None if result.get("cacheScope") == "public" else principal
        key = (origin, scope, method, chosen)
        uri = params.get("uri") if method == "resources/read" else None
        self._drop(key)
        self._drop((origin, principal if scope is None else None, method, chosen))
        self._entries[key] = _Entry(
            text, self.clock() + ttl / 1000, method, uri if isinstance(uri, str) else None
        )
        self._bytes += len(text)
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def notified(self, origin: Hashable, note: Mapping[str, Any]) -> None:
        """Make stale what the server's notification says has changed."""
        method = note.get("method")
        if not isinstance(method, str):
            return
        if method in _LISTS_CHANGED:
            self.forget(origin, *_LISTS_CHANGED[method])
        elif method == "notifications/resources/updated":
            params = note.get("params")
            uri = params.get("uri") if isinstance(params, dict) else None
            if isinstance(uri, str):
                self._forget_where(lambda key, e: key[0] == origin and e.uri == uri)

    def forget(self, origin: Hashable, *methods: str) -> None:
        """Drop every result of ``methods`` from this server."""
        self._forget_where(lambda key, e: key[0] == origin and e.method in methods)

    def clear(self) -> None:
        """Drop everything."""
        self._entries.clear()
        self._bytes = 0

    def _forget_where(self, stale: Callable[[Key, _Entry], bool]) -> None:
        for key in [key for key, entry in self._entries.items() if stale(key, entry)]:
            self._drop(key)

    def _drop(self, key: Key) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.text)
