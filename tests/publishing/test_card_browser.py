"""A Server Card read by a page on another origin, in a real browser: headless Chromium
(the distribution's, driven by Playwright, as tests/transports/test_cors_browser.py)
loads a page from one loopback origin, and the page's own ``fetch`` reads the card
``snodo run --card-name`` serves on another, with no ``--cors-origin``: the card, its
media type and ETag are readable there, and its ETag revalidates (a preflight for
``If-None-Match``, then 304). The MCP endpoint itself stays closed to that page."""

from __future__ import annotations

import asyncio
import http.server
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.loopback import http_server
from tests.support.processes import Serving, serving, snodo_run

playwright_api = pytest.importorskip("playwright.async_api")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it)"
)

READ = """async ({card, endpoint}) => {
  const seen = {};
  const first = await fetch(card, {
    headers: {Accept: "application/mcp-server-card+json"}, cache: "no-store",
  });
  const body = await first.json();
  seen.status = first.status;
  seen.type = first.headers.get("content-type");
  seen.etag = first.headers.get("etag");
  seen.name = body.name;
  seen.remote = body.remotes[0].url;
  const again = await fetch(card, {headers: {"If-None-Match": seen.etag}, cache: "no-store"});
  seen.again = again.status;
  try {
    await fetch(endpoint, {method: "POST", headers: {"content-type": "application/json"},
                           body: "{}"});
    seen.endpoint = "read";
  } catch (error) {
    seen.endpoint = "refused";
  }
  return seen;
}"""


class Page(http.server.BaseHTTPRequestHandler):
    """The page's origin: a blank page, served from loopback."""

    def do_GET(self) -> None:
        body = b"<!doctype html><title>catalog reader</title>"
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def forecasts() -> Iterator[Serving]:
    def command(port: int) -> list[str]:
        target = "docs/examples/publishing.py"
        return snodo_run(target, "http", "--port", str(port), "--card-name", "com.example/w")

    with serving(command) as running:
        yield running


async def in_browser(page_url: str, base: str) -> dict[str, Any]:
    async with playwright_api.async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.goto(page_url)
            seen: dict[str, Any] = await page.evaluate(
                READ, {"card": f"{base}/mcp/server-card", "endpoint": f"{base}/mcp"}
            )
            return seen
        finally:
            await browser.close()


def test_a_page_on_another_origin_reads_the_card(forecasts: Serving) -> None:
    with http_server(Page) as page:
        # localhost, not 127.0.0.1: another origin than the server's.
        page_url = f"http://localhost:{page.server_address[1]}/"
        seen = asyncio.run(asyncio.wait_for(in_browser(page_url, forecasts.base), 120))
    assert seen["status"] == 200
    assert seen["type"] == "application/mcp-server-card+json"
    assert seen["name"] == "com.example/w"
    assert seen["remote"] == f"{forecasts.base}/mcp"
    assert seen["etag"].startswith('"')
    assert seen["again"] == 304
    assert seen["endpoint"] == "refused"
