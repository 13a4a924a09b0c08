"""The Server Card over HTTP: ``snodo run --transport http --card-name`` serves it at
``<endpoint>/server-card`` with the headers the card's discovery rules list (media type,
CORS for any origin, caching, ETag and 304), outside the server's OAuth; the AI Catalog
when asked; ``Client.server_card`` and ``snodo list`` read it; a site mounting several
apps lists each one's card."""

from __future__ import annotations

import asyncio
import http.client
import http.server
import json
from collections.abc import Iterator
from typing import Any

import pytest

from snodo.client import Client, ProtocolViolation
from snodo.publishing import server_card
from snodo.transports.card_route import AiCatalog
from snodo.transports.http import HttpApp
from tests.publishing.schemas import errors
from tests.publishing.servers import protected
from tests.support.loopback import http_server
from tests.support.processes import Serving, serving, snodo, snodo_run

NAME = "io.github.example/forecasts"
MEDIA = "application/mcp-server-card+json"


@pytest.fixture(scope="module")
def forecasts() -> Iterator[Serving]:
    def command(port: int) -> list[str]:
        return snodo_run(
            "docs/examples/publishing.py",
            "http",
            "--port",
            str(port),
            "--card-name",
            NAME,
            "--ai-catalog",
        )

    with serving(command) as running:
        yield running


@pytest.fixture(scope="module")
def notes() -> Iterator[Serving]:
    def command(port: int) -> list[str]:
        return snodo_run("tests/publishing/servers.py:protected", "http", "--port", str(port))

    with serving(command) as running:
        yield running


def get(
    serving: Serving, path: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", serving.port, timeout=30)
    try:
        connection.request(method, path, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def test_the_card_is_served_with_the_headers_discovery_asks(forecasts: Serving) -> None:
    status, headers, body = get(forecasts, "/mcp/server-card", headers={"accept": MEDIA})
    assert status == 200
    card = json.loads(body)
    assert errors("server-card", card) == []
    assert card["name"] == NAME
    assert card["remotes"] == [
        {
            "type": "streamable-http",
            "url": f"{forecasts.base}/mcp",
            "supportedProtocolVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
        }
    ]
    assert headers["content-type"] == MEDIA
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-methods"] == "GET"
    assert headers["access-control-allow-headers"] == "Content-Type, If-None-Match"
    assert headers["access-control-expose-headers"] == "ETag"
    assert headers["cache-control"] == "public, max-age=3600"
    etag = headers["etag"]
    assert etag.startswith('"') and etag.endswith('"')
    again = get(forecasts, "/mcp/server-card", headers={"if-none-match": etag})
    assert again[0] == 304 and again[2] == b"" and again[1]["etag"] == etag
    changed = get(forecasts, "/mcp/server-card", headers={"if-none-match": '"other"'})
    assert changed[0] == 200 and changed[2] == body
    head = get(forecasts, "/mcp/server-card", "HEAD")
    assert head[0] == 200 and head[1]["etag"] == etag


def test_a_preflight_is_answered_and_other_methods_refused(forecasts: Serving) -> None:
    preflight = {
        "origin": "https://elsewhere.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "if-none-match",
    }
    status, headers, _ = get(forecasts, "/mcp/server-card", "OPTIONS", preflight)
    assert status == 204
    assert headers["access-control-allow-origin"] == "*"
    assert "If-None-Match" in headers["access-control-allow-headers"]
    status, headers, _ = get(forecasts, "/mcp/server-card", "POST")
    assert status == 405 and headers["allow"] == "GET, HEAD, OPTIONS"


def test_any_origin_reads_it_and_the_host_check_stays(forecasts: Serving) -> None:
    status, _, _ = get(forecasts, "/mcp/server-card", headers={"origin": "https://evil.example"})
    assert status == 200
    status, _, _ = get(forecasts, "/mcp/server-card", headers={"host": "evil.example"})
    assert status == 421


def test_the_catalog_lists_the_card(forecasts: Serving) -> None:
    status, headers, body = get(forecasts, "/.well-known/ai-catalog.json")
    assert status == 200 and headers["content-type"] == "application/ai-catalog+json"
    assert json.loads(body)["entries"] == [
        {
            "identifier": "urn:air:example.github.io:mcp:forecasts",
            "type": MEDIA,
            "url": f"{forecasts.base}/mcp/server-card",
        }
    ]


def test_the_card_needs_no_token_where_the_endpoint_does(notes: Serving) -> None:
    status, _, body = get(notes, "/mcp/server-card")
    assert status == 200
    card = json.loads(body)
    assert card["remotes"][0]["headers"][0]["name"] == "Authorization"
    status, headers, _ = get(notes, "/mcp", "POST", {"content-type": "application/json"})
    assert status == 401 and "www-authenticate" in headers
    status, _, _ = get(notes, "/.well-known/ai-catalog.json")
    assert status == 404, "the catalog is served when asked for"


def test_the_client_reads_the_card(forecasts: Serving, notes: Serving) -> None:
    async def read() -> list[Any]:
        return [
            await Client.server_card(f"{forecasts.base}/mcp"),
            await Client.server_card(f"{forecasts.base}/mcp/server-card"),
            await Client.server_card(f"{notes.base}/mcp"),
        ]

    first, same, other = asyncio.run(read())
    assert first == same and first.name == NAME and first.version == "1.2.0"
    assert other.name == "com.example/notes"


def test_a_server_without_a_card_answers_none_and_junk_is_refused(forecasts: Serving) -> None:
    async def read(url: str) -> Any:
        return await Client.server_card(url)

    assert asyncio.run(read(f"{forecasts.base}/elsewhere")) is None

    class Junk(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"name": "no card"}' if self.path == "/a/server-card" else b"x" * 300_000
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    with http_server(Junk) as junk:
        base = f"http://127.0.0.1:{junk.server_address[1]}"
        with pytest.raises(ProtocolViolation, match="not a Server Card"):
            asyncio.run(read(f"{base}/a"))
        with pytest.raises(ProtocolViolation, match="larger than"):
            asyncio.run(read(f"{base}/b"))


def test_snodo_list_shows_the_card(forecasts: Serving) -> None:
    done = snodo("list", f"{forecasts.base}/mcp")
    assert done.returncode == 0, done.stderr
    card = "io.github.example/forecasts 1.2.0 (Forecasts)  Weather forecasts for any city."
    assert done.stdout.startswith(f"server card (1)\n  {card}\n")
    listed = json.loads(snodo("list", f"{forecasts.base}/mcp", "--output", "json").stdout)
    assert listed["card"]["name"] == NAME


def _call(app: Any, path: str, host: str = "site.example") -> tuple[int, dict[str, str], bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "scheme": "https",
        "root_path": "",
        "headers": [(b"host", host.encode())],
    }
    asyncio.run(app(scope, receive, send))
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body


def test_a_site_lists_the_cards_of_the_apps_it_mounts() -> None:
    from snodo.cli import load
    from tests.support.paths import ROOT  # noqa: F401 - the checkout is on sys.path

    forecasts = load("docs/examples/publishing.py")
    first = HttpApp(forecasts, allowed_hosts=["site.example"])
    second = HttpApp(protected, path="/", allowed_hosts=["site.example"])
    catalog = AiCatalog({"/weather": first, "/notes/": second})
    status, headers, body = _call(catalog, "/.well-known/ai-catalog.json")
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    assert [(e["identifier"], e["url"]) for e in json.loads(body)["entries"]] == [
        ("urn:air:example.github.io:mcp:forecasts", "https://site.example/weather/mcp/server-card"),
        ("urn:air:example.com:mcp:notes", "https://site.example/notes/server-card"),
    ]
    status, _, body = _call(second, "/server-card")
    assert status == 200
    assert json.loads(body) == server_card(protected, url="https://site.example/")
