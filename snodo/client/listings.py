"""Following a listing's cursors (``tools/list`` and the like) within bounds.

A listing ends when a page has no ``nextCursor``. A server may instead send pages
forever, repeat a cursor, or send items that are not objects: at most
``ClientLimits.max_pages`` pages and ``max_items`` items are kept (``LimitExceeded``
beyond), a cursor seen before is a ``ProtocolViolation`` at once (following it could
only repeat pages), and so is a page whose items are not a list of objects.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from snodo.client.errors import LimitExceeded, ProtocolViolation
from snodo.client.limits import ClientLimits

__all__ = ["every_page"]

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
