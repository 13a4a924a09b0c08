"""Cursor pagination for the list methods (server/utilities/pagination.mdx).

A cursor is opaque to clients; here it is the base64url of ``<method>:<offset>``, so a
cursor from one list cannot be replayed on another. Anything that does not decode to
that shape is an invalid cursor (-32602). The last page carries no ``nextCursor``
(an empty string would be a valid cursor, not an end marker).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, TypeVar

from snodo.core.errors import InvalidParams

__all__ = ["page"]

T = TypeVar("T")


def _encode(method: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{method}:{offset}".encode()).decode().rstrip("=")


def _decode(method: str, cursor: Any) -> int:
    if not isinstance(cursor, str) or len(cursor) > 64:
        raise InvalidParams("Invalid cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidParams("Invalid cursor") from exc
    name, _, number = raw.rpartition(":")
    if name != method or not number.isdigit():
        raise InvalidParams("Invalid cursor")
    return int(number)


def page(
    items: Sequence[T], method: str, cursor: Any, size: int | None
) -> tuple[Sequence[T], str | None]:
    """The slice a cursor names, and the cursor of the next slice (None at the end)."""
    start = 0 if cursor is None else _decode(method, cursor)
    if start > len(items):
        raise InvalidParams("Invalid cursor")
    if size is None:
        return items[start:], None
    end = start + size
    return items[start:end], (_encode(method, end) if end < len(items) else None)
