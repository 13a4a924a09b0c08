"""CORS in a real browser: headless Chromium (the distribution's, driven by Playwright, as
tests/interop/test_apps_browser.py) loads a page from one loopback origin, and the page's
own ``fetch`` calls ``snodo run --cors-origin`` on another, in both eras: the preflights,
the answers, and the headers a page may read (``mcp-session-id``). A page on an origin
not listed cannot call it."""

from __future__ import annotations

import asyncio
import http.server
from collections.abc import Iterator
from typing import Any

import pytest

from snodo.core.http_headers import request_headers
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.loopback import http_server
from tests.support.processes import Serving, serving, snodo_run
from tests.support.wire import VERSION, request

playwright_api = pytest.importorskip("playwright.async_api")

TARGET = "tests/transports/beside_server.py:server"
LEGACY_VERSION = "2025-11-25"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it)"
)

# What the page runs: one fetch, and what a script on its origin can read of the answer.
FETCH = """async ({url, headers, body}) => {
  try {
    const answer = await fetch(url, {method: "POST", headers, body: JSON.stringify(body)});
    return {
      status: answer.status,
      session: answer.headers.get("mcp-session-id"),
      type: answer.headers.get("content-type"),
      text: await answer.text(),
    };
  } catch (error) {
    return {failed: String(error)};
  }
}"""


class Page(http.server.BaseHTTPRequestHandler):
    """The page's origin: a blank page, served from loopback."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>app</title>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def pages() -> Iterator[tuple[str, str]]:
    """Two page origins on loopback: the first is listed with --cors-origin."""
    with http_server(Page) as first, http_server(Page) as second:
        # localhost, not 127.0.0.1: another origin than the server's, even on its port.
        listed, other = (f"http://localhost:{s.server_address[1]}" for s in (first, second))
        yield listed, other


@pytest.fixture(scope="module")
def mcp(pages: tuple[str, str]) -> Iterator[Serving]:
    def command(port: int) -> list[str]:
        return snodo_run(TARGET, "http", "--port", str(port), "--cors-origin", pages[0])

    with serving(command) as running:
        yield running


def modern_call(region: str) -> tuple[dict[str, Any], dict[str, str]]:
    message = request("tools/call", {"name": "where", "arguments": {"region": region}})
    schema = {"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}
    headers = request_headers("tools/call", message["params"], VERSION, schema)
    return message, {"content-type": "application/json", "accept": "application/json"} | headers


def legacy_messages() -> list[tuple[dict[str, Any], dict[str, str]]]:
    both = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    client = {"name": "page", "version": "1"}
    params = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": client}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "from a page"}},
    }
    session = both | {"mcp-protocol-version": LEGACY_VERSION}
    return [(initialize, both), (initialized, session), (call, session)]


async def in_browser(page_url: str, mcp_url: str) -> dict[str, Any]:
    async with playwright_api.async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.goto(page_url)
            seen: dict[str, Any] = {}
            message, headers = modern_call("eu")
            seen["modern"] = await page.evaluate(
                FETCH, {"url": mcp_url, "headers": headers, "body": message}
            )
            legacy = []
            session = None
            for message, sent in legacy_messages():
                headers = sent if session is None else sent | {"mcp-session-id": session}
                answer = await page.evaluate(
                    FETCH, {"url": mcp_url, "headers": headers, "body": message}
                )
                session = session or answer.get("session")
                legacy.append(answer)
            seen["legacy"] = legacy
            return seen
        finally:
            await browser.close()


def run(page_url: str, mcp_url: str) -> dict[str, Any]:
    return asyncio.run(asyncio.wait_for(in_browser(page_url, mcp_url), 120))


def test_a_page_on_the_listed_origin_calls_the_server_in_both_eras(
    pages: tuple[str, str], mcp: Serving
) -> None:
    seen = run(pages[0], f"{mcp.base}/mcp")
    modern = seen["modern"]
    assert modern["status"] == 200, modern
    assert '"text":"in eu"' in modern["text"]
    opened, initialized, called = seen["legacy"]
    assert opened["status"] == 200, opened
    assert opened["session"]  # exposed: the page can go on with the session
    assert initialized["status"] == 202
    assert called["status"] == 200, called
    assert "from a page" in called["text"]


def test_a_page_on_another_origin_cannot(pages: tuple[str, str], mcp: Serving) -> None:
    seen = run(pages[1], f"{mcp.base}/mcp")
    assert seen["modern"] == {"failed": "TypeError: Failed to fetch"}
    assert seen["legacy"][0] == {"failed": "TypeError: Failed to fetch"}
