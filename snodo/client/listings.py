"""The Client's listings (``list_tools`` and the like), following cursors within bounds.

A listing ends when a page has no ``nextCursor``. A server may instead send pages
forever, repeat a cursor, or send items that are not objects: at most
``ClientLimits.max_pages`` pages and ``max_items`` items are kept (``LimitExceeded``
beyond), a cursor seen before is a ``ProtocolViolation`` at once (following it could
only repeat pages), and so is a page whose items are not a list of objects.

What a listing returns is a ``Listed``: a plain list that also carries the caching hints
of its pages (server/utilities/caching.mdx): the shortest ``ttl_ms`` of any page, and
``cache_scope`` ``"public"`` only when every page said so. When a page came from the
client's cache and the cursor it gave is refused (-32602), the kept pages of that list
are dropped and the listing starts again, once, from the first page (as the page on
pagination asks).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from snodo.client.cache import ResponseCache
from snodo.client.checks import OutputSchemas, listed_tool, safe_icons
from snodo.client.connection import Connection
from snodo.client.errors import LimitExceeded, ProtocolViolation, RequestError
from snodo.client.legacy_tasks import requires_task
from snodo.client.limits import ClientLimits
from snodo.client.requester import Requester
from snodo.client.results import validated
from snodo.core.errors import ErrorCode
from snodo.core.http_headers import valid_header_params
from snodo.revisions.authoring import Prompt, Resource, ResourceTemplate, Tool

__all__ = ["Listed", "Listings", "every_page"]

T = TypeVar("T")


class Listed(list[T]):
    """A listing's items, with its pages' caching hints: ``ttl_ms`` (the shortest) and
    ``cache_scope`` (``"public"`` only if every page was)."""

    ttl_ms: int = 0
    cache_scope: str = "private"
    next_cursor: str | None = None
    """Where the next page begins, for a listing of one page."""

    def hinted(self, ttl_ms: int, cache_scope: str) -> Listed[T]:
        """This list, carrying these hints."""
        self.ttl_ms, self.cache_scope = ttl_ms, cache_scope
        return self


def _hints(pages: list[dict[str, Any]]) -> tuple[int, str]:
    ttls = [p.get("ttlMs") for p in pages]
    ttl = min((int(t) if isinstance(t, int | float) and t > 0 else 0) for t in ttls)
    public = all(p.get("cacheScope") == "public" for p in pages)
    return ttl, "public" if public else "private"


Fetch = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends the listing's request with these params; returns its result."""


async def every_page(fetch: Fetch, method: str, key: str, limits: ClientLimits) -> Listed[Any]:
    """Every item under ``key`` of every page of ``method``, in order."""
    items: Listed[Any] = Listed()
    pages: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(limits.max_pages):
        result = await fetch({} if cursor is None else {"cursor": cursor})
        pages.append(result)
        page = result.get(key, [])
        if not isinstance(page, list) or not all(isinstance(item, dict) for item in page):
            raise ProtocolViolation(f"{method}: {key} is not a list of objects")
        items += page
        if len(items) > limits.max_items:
            raise LimitExceeded(f"{method}: more than {limits.max_items} items")
        cursor = result.get("nextCursor")
        if cursor is None:
            return items.hinted(*_hints(pages))
        if not isinstance(cursor, str):
            raise ProtocolViolation(f"{method}: nextCursor is not a string")
        if cursor in seen:
            raise ProtocolViolation(f"{method}: the server repeated the cursor {cursor[:80]!r}")
        seen.add(cursor)
    raise LimitExceeded(f"{method}: more than {limits.max_pages} pages")


class Listings:
    """The listings a Client delegates to: each follows every cursor (``every_page``); and
    ``server_supports``, what the server offers beyond the lists. It sends with the
    Client's ``Requester``, keeps what a tools listing teaches in the ``connection``
    (headers, tasks) and the ``outputs``, and forgets cached pages of ``origin``."""

    def __init__(
        self,
        requester: Requester,
        connection: Connection,
        outputs: OutputSchemas,
        limits: ClientLimits,
        cache: ResponseCache | None,
        origin: object,
    ) -> None:
        self.requester = requester
        self.connection = connection
        self.outputs = outputs
        self.limits = limits
        self.cache = cache
        self.origin = origin

    async def _all(self, method: str, key: str) -> Listed[dict[str, Any]]:
        send = functools.partial(self.requester.send, method, until=self.requester.until())
        hits = self.cache.hits if self.cache is not None else 0
        try:
            return await every_page(send, method, key, self.limits)
        except RequestError as refused:
            if self.cache is None or self.cache.hits == hits:
                raise
            if refused.code != ErrorCode.INVALID_PARAMS:
                raise
            # A cursor from a kept page the server no longer takes: start afresh.
            self.cache.forget(self.origin, method)
            return await every_page(send, method, key, self.limits)

    async def server_supports(self, extension_id: str) -> bool:
        """Whether the server advertises the extension ``extension_id``."""
        found = await self.requester.send("server/discover", {}, until=self.requester.until())
        capabilities = found.get("capabilities")
        extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
        return isinstance(extensions, dict) and extension_id in extensions

    async def tools(self) -> Listed[Tool]:
        """Every tool; those whose x-mcp-header use is invalid dropped, the rest
        remembered for their calls' headers and their results' checks."""
        listed = await self._all("tools/list", "tools")
        found = [(validated(Tool, listed_tool(t)), t) for t in listed]
        kept = [(tool, raw) for tool, raw in found if valid_header_params(raw["inputSchema"])]
        self.connection.tool_schemas = {tool.name: raw["inputSchema"] for tool, raw in kept}
        self.connection.task_required = frozenset(t.name for t, r in found if requires_task(r))
        self.outputs.learn(raw for _, raw in kept)
        return Listed(tool for tool, _ in kept).hinted(listed.ttl_ms, listed.cache_scope)

    async def resources(self) -> Listed[Resource]:
        """Every resource."""
        found = await self._all("resources/list", "resources")
        items = (validated(Resource, safe_icons(r)) for r in found)
        return Listed(items).hinted(found.ttl_ms, found.cache_scope)

    async def resource_templates(self) -> Listed[ResourceTemplate]:
        """Every resource template."""
        found = await self._all("resources/templates/list", "resourceTemplates")
        items = (validated(ResourceTemplate, safe_icons(t)) for t in found)
        return Listed(items).hinted(found.ttl_ms, found.cache_scope)

    async def prompts(self) -> Listed[Prompt]:
        """Every prompt."""
        found = await self._all("prompts/list", "prompts")
        items = (validated(Prompt, safe_icons(p)) for p in found)
        return Listed(items).hinted(found.ttl_ms, found.cache_scope)
