"""What the server's lifespan routes in the Starlette host that mounts it: the mount's own
path (no redirect), nested mounts too, the OAuth documents at the host's root, and
nothing where the host answers already; a resource that names another path than the
mount's is warned of."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from snodo.auth import AccessToken, InvalidToken, ProtectedResource
from snodo.server import Server
from snodo.transports.http import HttpApp

PRM = "/.well-known/oauth-protected-resource"


class NoTokens:
    async def verify(self, token: str) -> AccessToken:
        raise InvalidToken("none is valid")


def protected(resource: str) -> HttpApp:
    guarded = ProtectedResource(resource, ["https://auth.example.com"], NoTokens())
    return HttpApp(Server("p", "1.0.0", authorization=guarded), path="/")


def served(
    app: Starlette, mcp: HttpApp, scenario: Callable[[httpx.AsyncClient], Awaitable[Any]]
) -> Any:
    async def run() -> Any:
        async with mcp.lifespan(app):
            transport = httpx.ASGITransport(app)
            async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
                return await scenario(http)

    return asyncio.run(run())


async def _mine(request: Any) -> PlainTextResponse:
    return PlainTextResponse("the host's own")


def test_nested_mounts_answer_at_their_own_path_and_the_metadata_at_the_root() -> None:
    mcp = protected("http://localhost/api/mcp")
    app = Starlette(routes=[Mount("/api", routes=[Mount("/mcp", app=mcp)])])

    async def scenario(http: httpx.AsyncClient) -> list[Any]:
        at_mount = await http.post("/api/mcp", json={})
        metadata = await http.get(f"{PRM}/api/mcp")
        root = await http.get(PRM)
        return [
            at_mount.status_code,
            at_mount.headers.get("location"),
            metadata.json(),
            root.status_code,
        ]

    status, location, document, root = served(app, mcp, scenario)
    assert (status, location) == (401, None)  # the endpoint's challenge, not a redirect
    assert document["resource"] == "http://localhost/api/mcp"
    assert root == 200
    assert [mount.prefix for mount in mcp.mounts] == ["/api/mcp"]


def test_the_hosts_own_routes_keep_their_paths() -> None:
    """A route the host lists answers as before: nothing is added over it."""
    mcp = protected("http://localhost/mcp")
    app = Starlette(routes=[Route(PRM, _mine), Route("/mcp", _mine), Mount("/mcp", app=mcp)])

    async def scenario(http: httpx.AsyncClient) -> list[str]:
        return [(await http.get(PRM)).text, (await http.get("/mcp")).text]

    assert served(app, mcp, scenario) == ["the host's own", "the host's own"]
    assert sum(isinstance(r, Route) and r.path == "/mcp" for r in app.routes) == 1


def test_mounted_at_the_root_nothing_is_added() -> None:
    mcp = protected("http://localhost/")
    app = Starlette(routes=[Route("/mine", _mine), Mount("/", app=mcp)])
    before = list(app.routes)

    async def scenario(http: httpx.AsyncClient) -> int:
        return (await http.get(PRM)).status_code

    assert served(app, mcp, scenario) == 200
    assert app.routes == before


def test_not_mounted_in_the_host_nothing_changes() -> None:
    mcp = protected("http://localhost/mcp")
    app = Starlette(routes=[Route("/mine", _mine)])
    served(app, mcp, lambda http: http.get("/mine"))
    assert [r.path for r in app.routes] == ["/mine"] and mcp.mounts == []


def test_a_resource_at_another_path_than_the_mount_is_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mcp = protected("http://localhost/mcp/mcp")  # the proxy's default under a mount
    app = Starlette(routes=[Mount("/mcp", app=mcp)])
    with caplog.at_level(logging.WARNING, logger="snodo"):
        served(app, mcp, lambda http: http.get("/"))
    assert (
        "snodo: the endpoint is mounted at /mcp, but the OAuth resource"
        " http://localhost/mcp/mcp names /mcp/mcp" in caplog.text
    )
