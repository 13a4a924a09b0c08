"""examples/apps.py in a real browser: headless Chromium (the distribution's, driven by
Playwright) runs a minimal host page (interop/apps_host/host.html) built on the official
``@modelcontextprotocol/ext-apps`` host bridge, with snodo's client behind it talking to
the example served by ``snodo run`` over HTTP.

The host lists the tools, reads the view the chart tool names, calls the tool and hands
the view its input and result through the bridge: the chart shows the result. A click on
a bar makes the view call the app-only ``day`` tool through the bridge (the host calls it
with snodo's client), and the view shows the answer; the view's form calls ``week`` for
another city the same way."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client
from snodo.extensions import apps as client_apps
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

playwright_api = pytest.importorskip("playwright.async_api")

HOST_DIR = ROOT / "interop" / "apps_host"
BUNDLE = HOST_DIR / "dist" / "host.js"
# Where the page pretends to live: every request to it is answered by the test (route).
ORIGIN = "http://apps-host.test"

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs it)"),
    pytest.mark.skipif(
        not BUNDLE.exists(), reason="interop/apps_host not built (scripts/_env.sh builds it)"
    ),
]


def _result_json(result: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


async def _host_files(route: Any) -> None:
    name = route.request.url.removeprefix(ORIGIN + "/") or "host.html"
    path = HOST_DIR / ("dist/host.js" if name == "host.js" else "host.html")
    kind = "text/javascript" if name == "host.js" else "text/html"
    await route.fulfill(body=Path(path).read_bytes(), content_type=kind)


def test_the_view_renders_and_calls_back_through_the_official_host_bridge() -> None:
    views_calls: list[dict[str, Any]] = []
    console: list[str] = []

    async def scenario(url: str) -> None:
        async with Client.http(url, extensions=client_apps.DECLARE) as client:
            tools = await client.list_tools()
            week = next(tool for tool in tools if tool.name == "week")
            ui = client_apps.tool_ui(week)
            assert ui is not None and ui.resource_uri == "ui://week/chart"
            assert [tool.name for tool in client_apps.model_tools(tools)] == ["week"]
            read = await client.read_resource(ui.resource_uri)
            page_contents = read.contents[0]
            assert page_contents.mime_type == "text/html;profile=mcp-app"
            html = page_contents.text  # type: ignore[union-attr]
            oslo = _result_json(await client.call_tool("week", {"city": "Oslo"}))

            async def call_tool(params: dict[str, Any]) -> dict[str, Any]:
                """The host's answer to a tools/call from the view: snodo's client."""
                views_calls.append(params)
                answer = await client.call_tool(params["name"], params.get("arguments") or {})
                return _result_json(answer)

            async with playwright_api.async_playwright() as driver:
                browser = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = await browser.new_page()
                    page.on("console", lambda message: console.append(message.text))
                    page.on("pageerror", lambda error: console.append(f"error: {error}"))
                    await page.route(f"{ORIGIN}/**", _host_files)
                    await page.expose_function("mcpCallTool", call_tool)
                    await page.goto(f"{ORIGIN}/host.html")
                    await page.evaluate(
                        "([html, args, result]) => window.showApp(html, args, result)",
                        [html, {"city": "Oslo"}, oslo],
                    )
                    view = page.frame_locator("#view")
                    expect = playwright_api.expect

                    # The tool result, delivered by the bridge, drawn as seven bars.
                    await expect(view.locator("#city")).to_have_text("Oslo")
                    bars = view.locator("#bars button")
                    figures = [f"{d['day']} {d['high']}" for d in oslo["structuredContent"]["days"]]
                    await expect(bars).to_have_text(figures)

                    # A bar: the view calls the app-only tool through the host.
                    await bars.nth(2).click()
                    wednesday = await client.call_tool("day", {"city": "Oslo", "day": "Wed"})
                    expected = wednesday.content[0].text  # type: ignore[union-attr]
                    await expect(view.locator("#detail")).to_have_text(expected)

                    # The form: the view calls the chart's tool again, for another city.
                    await view.locator("#where").fill("Bergen")
                    await view.locator("#other button").click()
                    await expect(view.locator("#city")).to_have_text("Bergen")
                    bergen = _result_json(await client.call_tool("week", {"city": "Bergen"}))
                    figures = [
                        f"{d['day']} {d['high']}" for d in bergen["structuredContent"]["days"]
                    ]
                    await expect(bars).to_have_text(figures)
                finally:
                    await browser.close()

    target = "examples/apps.py:server"
    with serving(lambda port: snodo_run(target, "http", "--port", str(port))) as srv:
        try:
            asyncio.run(asyncio.wait_for(scenario(f"{srv.base}/mcp"), 90))
        except BaseException as exc:
            raise AssertionError(f"{exc!r}; the page said: {console}") from exc
    assert views_calls == [
        {"name": "day", "arguments": {"city": "Oslo", "day": "Wed"}},
        {"name": "week", "arguments": {"city": "Bergen"}},
    ]
