"""An AI Catalog listing Server Cards (the server card's discovery.md, "AI Catalog").

A site serving several MCP servers lists their cards in one document at
``/.well-known/ai-catalog.json``; each entry has an identifier, the card's media type
and the card's URL. An identifier is domain-anchored, ``urn:air:PUBLISHER:mcp:NAME``,
the publisher being the card name's namespace read back as a domain
(``com.example/weather`` is ``urn:air:example.com:mcp:weather``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from snodo.revisions.server_card import CATALOG_SPEC_VERSION, MEDIA_TYPE

__all__ = ["ai_catalog", "catalog_bytes", "identifier"]


def identifier(card_name: str) -> str:
    """The catalog identifier of a card named ``NAMESPACE/NAME``."""
    namespace, _, name = card_name.partition("/")
    publisher = ".".join(reversed(namespace.split(".")))
    return f"urn:air:{publisher}:mcp:{name}"


def ai_catalog(cards: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """The catalog of ``(card name, card URL)`` pairs, in the order given."""
    return {
        "specVersion": CATALOG_SPEC_VERSION,
        "entries": [
            {"identifier": identifier(name), "type": MEDIA_TYPE, "url": url} for name, url in cards
        ],
    }


def catalog_bytes(catalog: dict[str, Any]) -> bytes:
    return (json.dumps(catalog, indent=2) + "\n").encode("utf-8")
