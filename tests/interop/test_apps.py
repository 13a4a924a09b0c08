"""MCP Apps (examples/apps.py, served by ``snodo run``) read by the official Python
SDK's client (mcp 2.3.0) and the official TypeScript client, in both eras: the extension
in the server's capabilities, the tool's view in its ``_meta.ui``, the view read as
``text/html;profile=mcp-app`` with its ``_meta.ui``; the app-only tool kept from a
client that renders no views. And snodo's client in the legacy era, declaring views, on
docs/examples/app_view.py: the app-only tool listed and callable."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from typing import Any

import httpx
import pytest

from snodo.client import Client, RequestError
from snodo.extensions import apps as client_apps
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

mcp_client = pytest.importorskip("mcp.client")

EXAMPLE = "examples/apps.py:server"
TARGET = "docs/examples/app_view.py:server"
UI = "io.modelcontextprotocol/ui"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_client_sees_the_view(mode: str) -> None:
    """``auto``: the client finds 2026-07-28 with server/discover (pinned, it would skip
    the discovery that carries the capabilities); ``legacy``: initialize."""

    async def scenario(url: str) -> dict[str, Any]:
        async with mcp_client.Client(url, mode=mode) as client:
            if mode == "auto":
                assert client.protocol_version == "2026-07-28"
            tools = (await client.list_tools()).tools
            read = await client.read_resource("ui://week/chart")
            called = await client.call_tool("week", {"city": "Oslo"})
            return {
                "extensions": client.server_capabilities.extensions,
                "tools": {tool.name: tool.meta for tool in tools},
                "contents": read.contents[0],
                "text": called.content[0].text,
            }

    with serving(lambda port: snodo_run(EXAMPLE, "http", "--port", str(port))) as server:
        seen = asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    assert UI in seen["extensions"]
    assert seen["tools"] == {
        "week": {"ui": {"resourceUri": "ui://week/chart", "visibility": ["model", "app"]}}
    }, "the app-only tool is kept from a client that renders no views"
    contents = seen["contents"]
    assert contents.mime_type == "text/html;profile=mcp-app"
    assert contents.text.startswith("<!doctype html>")
    assert contents.meta == {"ui": {"prefersBorder": True}}
    assert '"city":"Oslo"' in seen["text"].replace(" ", "")


def test_a_legacy_session_declaring_views() -> None:
    async def scenario(url: str) -> None:
        host = Client.http(url, era="legacy", extensions=client_apps.DECLARE)
        async with host:
            tools = await host.list_tools()
            assert [tool.name for tool in client_apps.model_tools(tools)] == ["forecast"]
            assert {tool.name for tool in tools} == {"forecast", "refresh"}
            result = await host.call_tool("refresh", {"city": "Oslo"})
            assert result.structured_content == {"city": "Oslo", "sky": "cloudy"}
        async with Client.http(url, era="legacy") as plain:
            assert [tool.name for tool in await plain.list_tools()] == ["forecast"]
            with pytest.raises(RequestError) as refused:
                await plain.call_tool("refresh", {"city": "Oslo"})
            assert refused.value.code == -32602  # as for a tool the server does not have

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        url = f"{server.base}/mcp"
        asyncio.run(asyncio.wait_for(scenario(url), 30))
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        headers = {"accept": "application/json, text/event-stream"}
        answer = httpx.post(url, json=init, headers=headers, timeout=10).json()
    assert UI in answer["result"]["capabilities"]["extensions"]


def test_a_modern_client_that_renders_no_views_cannot_call_the_app_only_tool() -> None:
    from snodo.cli import load
    from snodo.client.transports import MemoryTransport

    server = load(TARGET)

    async def scenario() -> None:
        async with Client(MemoryTransport(server)) as plain:
            with pytest.raises(RequestError) as refused:
                await plain.call_tool("refresh", {"city": "Oslo"})
            assert refused.value.code == -32602

    asyncio.run(scenario())


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_official_typescript_client_sees_the_view() -> None:
    """interop/official_client/check_apps.mjs, pinned to 2026-07-28 and by default."""
    client_dir = ROOT / "interop" / "official_client"
    if not (client_dir / "node_modules").is_dir():
        subprocess.run(["bash", str(ROOT / "scripts" / "interop"), "typed"], cwd=ROOT, check=False)
    with serving(lambda port: snodo_run(EXAMPLE, "http", "--port", str(port))) as server:
        run = subprocess.run(
            ["node", str(client_dir / "check_apps.mjs")],
            cwd=ROOT,
            env={**os.environ, "SNODO_HTTP_URL": f"{server.base}/mcp"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1] == "official client (apps): 12 passed, 0 failed"
