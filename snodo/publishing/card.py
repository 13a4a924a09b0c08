"""A server's Server Card (SEP-2127), made from its declarations and checked by the
generated ``ServerCard`` model.

The card says who the server is (``snodo.publishing.identity``) and, given the URL it
is served at, one ``streamable-http`` remote with the protocol versions the server
offers, both eras' (what ``server/discover`` and ``initialize`` will answer), and the
``Authorization`` header a client must send when the server is protected by OAuth
(``Server(authorization=...)``). The same function makes what ``snodo card`` prints and
what the HTTP app serves at ``<endpoint>/server-card`` (``snodo.transports.card_route``).
"""

from __future__ import annotations

import json
from typing import Any

from snodo.publishing.identity import checked, identity
from snodo.revisions.server_card import SCHEMA_URI, ServerCard
from snodo.server import Server

__all__ = ["card_bytes", "server_card"]

BEARER = {
    "name": "Authorization",
    "description": "An OAuth 2.1 access token for this server, as Bearer TOKEN: its "
    "protected resource metadata names the authorization servers that issue one.",
    "isRequired": True,
    "isSecret": True,
    "value": "Bearer {token}",
    "variables": {
        "token": {"description": "The access token.", "isRequired": True, "isSecret": True}
    },
}
"""The header a protected server requires (the card has no other way to say OAuth)."""


def remote(server: Server, url: str) -> dict[str, Any]:
    """The card's remote for the server at ``url``."""
    entry: dict[str, Any] = {
        "type": "streamable-http",
        "url": url,
        "supportedProtocolVersions": list(server.versions),
    }
    if server.authorization is not None:
        entry["headers"] = [BEARER]
    return entry


def server_card(server: Server, name: str | None = None, url: str | None = None) -> dict[str, Any]:
    """The card as JSON data: ``name`` or the server's ``card_name``, with a remote at
    ``url`` when given. ``PublishingError`` says what the server must declare."""
    document: dict[str, Any] = {"$schema": SCHEMA_URI, **identity(server, name).members()}
    if url is not None:
        document["remotes"] = [remote(server, url)]
    return checked(ServerCard, document, "the Server Card")


def card_bytes(card: dict[str, Any]) -> bytes:
    """The card as it is served and printed: indented JSON, one trailing newline."""
    return (json.dumps(card, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
