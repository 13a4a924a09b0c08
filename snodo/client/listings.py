"""The Client's listings (``list_tools`` and the like), following cursors within bounds.

A listing ends when a page has no ``nextCursor``. A server may instead send pages
forever, repeat a cursor, or send items that are not objects: at most
``ClientLimits.max_pages`` pages and ``max_items`` items are kept (``LimitExceeded``
beyond), a cursor seen before is a ``ProtocolViolation`` at once (following it could
only repeat pages), and so is a page whose items are not a list of objects.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from snodo.client.checks import OutputSchemas, listed_tool, safe_icons
from snodo.client.connection import Connection
from snodo.client.errors import LimitExceeded, ProtocolViolation
from snodo.client.limits import ClientLimits
from snodo.client.results import validated
from snodo.http_headers import valid_header_params
from snodo_wire import Prompt, Resource, ResourceTemplate, Tool

__all__ = ["Listings", "every_page"]

Fetch = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Sends the listing's request with these params; returns its result."""


async def every_page(fetch: Fetch, method: str, key: str, limits: ClientLimits) -> list[Any]:
    """Every item under ``key`` of every page of ``method``, in order."""
    items: list[Any] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(limits.max_pages):
        result = await fetch({} if cursor is None else {"cursor": cursor})
        page = result.get(key, [])
        if not isinstance(page, list) or not all(isinstance(item, dict) for item in page):
            raise ProtocolViolation(f"{method}: {key} is not a list of objects")
        items += page
        if len(items) > limits.max_items:
            raise LimitExceeded(f"{method}: more than {limits.max_items} items")
        cursor = result.get("nextCursor")
        if cursor is None:
            return items
        if not isinstance(cursor, str):
            raise ProtocolViolation(f"{method}: nextCursor is not a string")
        if cursor in seen:
            raise ProtocolViolation(f"{method}: the server repeated the cursor {cursor[:80]!r}")
        seen.add(cursor)
    raise LimitExceeded(f"{method}: more than {limits.max_pages} pages")


class Listings:
    """``Client``'s list methods: each follows every cursor (``every_page``)."""

    connection: Connection
    outputs: OutputSchemas
    limits: ClientLimits

    async def _send(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool = False,
        until: float | None = None,
    ) -> dict[str, Any]:
        raise NotImplementedError  # the Client's

    def _until(self) -> float | None:
        raise NotImplementedError  # the Client's

    async def _all(self, method: str, key: str) -> list[dict[str, Any]]:
        send = functools.partial(self._send, method, until=self._until())
        return await every_page(send, method, key, self.limits)

    async def list_tools(self) -> list[Tool]:
        """Every tool, following cursors. Tools whose x-mcp-header use is invalid are
        dropped (basic/transports/streamable-http.mdx), and the rest remembered so that
        calls carry their Mcp-Param headers and results are checked against their
        output schemas."""
        listed = await self._all("tools/list", "tools")
        found = [(validated(Tool, listed_tool(t)), t) for t in listed]
        kept = [(tool, raw) for tool, raw in found if valid_header_params(raw["inputSchema"])]
        self.connection.tool_schemas = {tool.name: raw["inputSchema"] for tool, raw in kept}
        self.outputs.learn(raw for _, raw in kept)
        return [tool for tool, _ in kept]

    async def list_resources(self) -> list[Resource]:
        """Every resource, following cursors."""
        found = await self._all("resources/list", "resources")
        return [validated(Resource, safe_icons(r)) for r in found]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, following cursors."""
        found = await self._all("resources/templates/list", "resourceTemplates")
        return [validated(ResourceTemplate, safe_icons(t)) for t in found]

    async def list_prompts(self) -> list[Prompt]:
        """Every prompt, following cursors."""
        found = await self._all("prompts/list", "prompts")
        return [validated(Prompt, safe_icons(p)) for p in found]
