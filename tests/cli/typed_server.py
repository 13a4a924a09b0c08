"""A server whose tools take every kind of argument ``snodo call`` converts: strings
(one optional), numbers, booleans, a list, an enum and an untyped value. Each tool
answers with what it received, types included, as JSON text."""

from __future__ import annotations

import json
import secrets
from enum import Enum
from typing import Any

from snodo import Server

server = Server("typed", "1.0.0", state_secret=secrets.token_bytes(32))


class Colour(Enum):
    RED = "red"
    BLUE = "blue"


class Size(Enum):
    SMALL = 1
    LARGE = 2


@server.tool
def store(
    folder: str,
    count: int,
    ratio: float = 1.0,
    pinned: bool = False,
    tags: list[str] | None = None,
    label: str | None = None,
    colour: Colour = Colour.RED,
    size: Size = Size.SMALL,
    anything: Any = None,
) -> str:
    """Echo the arguments with their Python types."""
    received = {
        "folder": folder,
        "count": count,
        "ratio": ratio,
        "pinned": pinned,
        "tags": tags,
        "label": label,
        "colour": colour.value,
        "size": size.value,
        "anything": anything,
    }
    return json.dumps({k: [v, type(v).__name__] for k, v in received.items()})


@server.prompt
def review(code: str, style: str = "short") -> str:
    """docs/hosts.md's example: ``snodo call SERVER --prompt review code=...``."""
    return f"Review {code!r}, {style}."
