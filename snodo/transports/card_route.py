"""The Server Card an ``HttpApp`` serves beside its endpoint, and the AI Catalog.

With a ``card_name`` (``Publishing(card_name=...)``, ``snodo run --card-name``) the app
answers ``GET <endpoint>/server-card`` (``/server-card`` when it serves every path) with
the server's card (``snodo.publishing.card``) as the card's discovery rules ask: media
type ``application/mcp-server-card+json``, readable from any origin (``Access-Control-
Allow-Origin: *``, a preflight answered, ``ETag`` exposed), ``Cache-Control: public,
max-age=3600``, an ``ETag`` that ``If-None-Match`` turns into ``304 Not Modified``. It is
public metadata: no authentication and no Origin check apply, the Host check does. The
card's remote is the endpoint's URL as the request reached it (scheme, Host, mount
prefix), unless ``card_url`` names the public one. With ``catalog`` the app also
answers ``/.well-known/ai-catalog.json`` with a catalog listing that card;
``AiCatalog`` is the catalog of several apps mounted in one ASGI application.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol

from snodo.publishing.card import card_bytes, server_card
from snodo.publishing.catalog import ai_catalog, catalog_bytes
from snodo.revisions.server_card import (
    CACHE_CONTROL,
    CARD_SUFFIX,
    CATALOG_MEDIA_TYPE,
    CATALOG_PATH,
    MEDIA_TYPE,
)
from snodo.server import Server

__all__ = ["AiCatalog", "Published", "card_path"]

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]
Receive = Callable[[], Awaitable[Message]]

CORS = (
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET"),
    (b"access-control-allow-headers", b"Content-Type, If-None-Match"),
    (b"access-control-expose-headers", b"ETag"),
)
"""What discovery.md's "CORS Requirements" lists: any origin may read the card."""
KEPT = 16
"""Cards kept made, one per URL the endpoint was reached at (Host, scheme, prefix)."""


class HostCheck(Protocol):
    def host_allowed(self, host: str) -> bool: ...


def card_path(endpoint: str | None) -> str:
    """Where the card of an endpoint at ``endpoint`` (None: every path) is."""
    return (endpoint or "").rstrip("/") + CARD_SUFFIX


def _base(scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
    """The request's origin and mount prefix, as the client reached them."""
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    return f"{scheme}://{headers.get('host', '')}{scope.get('root_path', '')}"


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers.append((b"content-length", b"%d" % len(body)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def answer_document(
    scope: Mapping[str, Any], headers: Mapping[str, str], send: Send, body: bytes, media: str
) -> None:
    """A public JSON document: CORS for any origin, caching, ETag and 304."""
    method = scope["method"]
    if method == "OPTIONS":
        await _send(send, 204, [*CORS, (b"access-control-max-age", b"600")], b"")
        return
    if method not in ("GET", "HEAD"):
        await _send(send, 405, [(b"allow", b"GET, HEAD, OPTIONS")], b"method not allowed")
        return
    tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    common = [*CORS, (b"cache-control", CACHE_CONTROL.encode()), (b"etag", tag.encode())]
    wanted = headers.get("if-none-match", "")
    if wanted and (wanted.strip() == "*" or tag in {t.strip() for t in wanted.split(",")}):
        await send({"type": "http.response.start", "status": 304, "headers": common})
        await send({"type": "http.response.body", "body": b""})
        return
    typed = [*common, (b"content-type", media.encode())]
    await _send(send, 200, typed, b"" if method == "HEAD" else body)


class Published:
    """The card (and catalog) of one app: the paths it answers, and its answers."""

    def __init__(
        self, server: Server, endpoint: str | None, card_url: str | None, catalog: bool
    ) -> None:
        self.server = server
        self.endpoint = (endpoint or "").rstrip("/")
        self.card = card_path(endpoint)
        self.card_url = card_url
        self.paths = frozenset({self.card, *((CATALOG_PATH,) if catalog else ())})
        self.made: dict[str, bytes] = {}
        server_card(server, url=card_url)  # what the server lacks for a card fails here

    def remote(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        """The endpoint's URL: ``card_url`` when given, else as the request reached it."""
        if self.card_url is not None:
            return self.card_url
        return _base(scope, headers) + (self.endpoint or "/")

    def card_body(self, url: str) -> bytes:
        """The card with its remote at ``url``, as served (made once per URL)."""
        if url not in self.made:
            if len(self.made) >= KEPT:
                self.made.clear()
            self.made[url] = card_bytes(server_card(self.server, url=url))
        return self.made[url]

    async def answer(
        self, scope: Mapping[str, Any], headers: Mapping[str, str], head: HostCheck, send: Send
    ) -> None:
        """Answer a request for the card or the catalog (under an allowed Host)."""
        if not head.host_allowed(headers.get("host", "")):
            await _send(send, 421, [], b"misdirected request: host not allowed")
            return
        url = self.remote(scope, headers)
        if scope["path"].removeprefix(scope.get("root_path", "")) == self.card:
            await answer_document(scope, headers, send, self.card_body(url), MEDIA_TYPE)
            return
        if self.card_url is not None:
            where = self.card_url.rstrip("/") + CARD_SUFFIX
        else:
            where = _base(scope, headers) + self.card
        body = catalog_bytes(ai_catalog([(str(self.server.card_name), where)]))
        await answer_document(scope, headers, send, body, CATALOG_MEDIA_TYPE)


class AiCatalog:
    """An ASGI app answering ``/.well-known/ai-catalog.json`` for apps mounted at the
    given prefixes: each one with a card is an entry, its URL under its prefix."""

    def __init__(self, mounted: Mapping[str, Any]) -> None:
        self.mounted = {prefix.rstrip("/"): app for prefix, app in mounted.items()}

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope["headers"]
        }
        origin = _base({**scope, "root_path": ""}, headers)
        cards = [
            (str(app.server.card_name), f"{origin}{prefix}{card_path(app.path)}")
            for prefix, app in self.mounted.items()
            if getattr(app.server, "card_name", None)
        ]
        body = catalog_bytes(ai_catalog(cards))
        await answer_document(scope, headers, send, body, CATALOG_MEDIA_TYPE)
