"""MCP Apps through a gateway's front (``apps.passed()``): advertised when a server behind
declares it, not otherwise, and not at all without the gateway half; the views and the
app-only tools pass as the feature methods do, hidden by the backend from a front client
that renders no views."""

from __future__ import annotations

import asyncio
from typing import Any

from snodo import MISSING
from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.extensions import apps, gateway_halves
from snodo.gateway import mount, proxy
from snodo.server import Server

UI = apps.EXTENSION_ID


def backend() -> Server:
    server = Server("views", "1")
    view = apps.App(server, "ui://v/view", "<!doctype html><p>hi</p>")

    @view.tool
    def shown() -> str:
        return "for everyone"

    @view.tool(visibility=["app"])
    def pressed() -> str:
        return "for the view"

    return server


def plain_backend() -> Server:
    server = Server("plain", "1")

    @server.tool
    def anything() -> str:
        return "x"

    return server


def connect(server: Server) -> Any:
    return lambda **options: Client(MemoryTransport(server), **options)


async def seen(front: Server, **client_options: Any) -> tuple[dict[str, Any], list[str]]:
    await front.startup()
    try:
        async with Client(MemoryTransport(front), **client_options) as client:
            found = await client.discover()
            tools = [tool.name for tool in await client.list_tools()]
            declared = found.capabilities.extensions
            return ({} if declared is MISSING else dict(declared)), tools
    finally:
        await front.shutdown()


def test_the_front_advertises_apps_only_through_the_gateway_half() -> None:
    without, _ = asyncio.run(seen(proxy(connect(backend()))))
    assert UI not in without
    passed, tools = asyncio.run(seen(proxy(connect(backend()), passing=[apps.passed()])))
    assert passed[UI] == {}
    assert tools == ["shown"]  # the backend hides its app-only tool from this client
    _, hosted = asyncio.run(
        seen(proxy(connect(backend()), passing=gateway_halves()), extensions=apps.DECLARE)
    )
    assert hosted == ["shown", "pressed"]


def test_a_backend_without_views_is_not_said_to_have_them() -> None:
    found, _ = asyncio.run(seen(proxy(connect(plain_backend()), passing=[apps.passed()])))
    assert UI not in found


def test_a_mounting_front_advertises_apps_when_a_member_declares_it() -> None:
    front = Server("front", "1")
    mount(front, plain_backend(), prefix="plain", passing=[apps.passed()])
    mount(front, backend(), prefix="views")
    found, tools = asyncio.run(seen(front, extensions=apps.DECLARE))
    assert found[UI] == {}
    assert tools == ["plain_anything", "views_shown", "views_pressed"]
