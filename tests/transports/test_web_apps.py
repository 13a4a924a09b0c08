"""snodo's HTTP app mounted in FastAPI and Starlette (docs/web-apps.md): the guide's two
programs, served by uvicorn as real processes, answer every flow of
examples/preferences.py in both eras beside the frameworks' own routes, with the
server's lifespan run by the host framework's."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.idp import CLIENT_ID, CLIENT_SECRET, USER, Provider, TestUser, serve_provider
from tests.support.preferences_flows import every_flow
from tests.support.processes import Serving, serving

pytest.importorskip("fastapi")

SAVED = "Would save: theme dark, language ja."
EVERY_FLOW = [
    SAVED,
    "You agreed to open the privacy notice; whether you read it is not known.",
    SAVED,
    f"User preferences: {SAVED}",
    "Hallo! [ja; notes]",
]


def uvicorn(program: str) -> Any:
    def command(port: int) -> list[str]:
        return [
            *(sys.executable, "-m", "uvicorn", "--app-dir", "docs/examples", f"{program}:app"),
            *("--port", str(port), "--no-proxy-headers", "--log-level", "warning"),
        ]

    return command


# The programs import examples/preferences.py as ``preferences``, as their docstrings say.
PATH = os.pathsep.join(filter(None, ["examples", os.environ.get("PYTHONPATH")]))


@pytest.fixture(scope="module")
def fastapi_app() -> Iterator[Serving]:
    with serving(uvicorn("fastapi_app"), env={"PYTHONPATH": PATH}) as running:
        yield running


@pytest.fixture(scope="module")
def starlette_app() -> Iterator[Serving]:
    with serving(uvicorn("starlette_app"), env={"PYTHONPATH": PATH}) as running:
        yield running


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("endpoint", ["/mcp", "/mcp/"])
def test_fastapi_serves_every_flow_at_its_mount(
    fastapi_app: Serving, era: str, endpoint: str
) -> None:
    """At the mount's own path too: its lifespan routes /mcp to the app, where FastAPI
    alone answered it with a redirect to /mcp/."""
    assert every_flow(f"{fastapi_app.base}{endpoint}", era) == EVERY_FLOW


def test_fastapi_keeps_its_own_routes(fastapi_app: Serving) -> None:
    answer = httpx.get(f"{fastapi_app.base}/hello")
    assert (answer.status_code, answer.json()) == (200, {"hello": "from FastAPI"})
    # Below the mount, only the endpoint: the rest is snodo's 404.
    assert httpx.get(f"{fastapi_app.base}/mcp/elsewhere").status_code == 404


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_starlette_serves_every_flow_under_its_prefix(starlette_app: Serving, era: str) -> None:
    assert every_flow(f"{starlette_app.base}/api/mcp", era) == EVERY_FLOW


def test_starlette_runs_its_lifespan_around_the_servers(starlette_app: Serving) -> None:
    answer = httpx.get(f"{starlette_app.base}/status")
    assert answer.json() == {"opened": ["the app's own resources"], "tools": 3}
    assert httpx.post(f"{starlette_app.base}/api/other").status_code == 404


def test_an_oauth_protected_server_under_a_prefix() -> None:
    """The challenge names the metadata of the mounted endpoint, and the host routes the
    well-known path to the same app, which serves that metadata."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from snodo.auth import AccessToken, InvalidToken, ProtectedResource
    from snodo.server import Server
    from snodo.transports.http import HttpApp

    class NoTokens:
        async def verify(self, token: str) -> AccessToken:
            raise InvalidToken("none is valid")

    resource = "http://localhost/api/mcp"
    protected = ProtectedResource(resource, ["https://auth.example.com"], NoTokens())
    mcp = HttpApp(Server("protected", "1.0.0", authorization=protected))
    well_known = "/.well-known/oauth-protected-resource"
    app = Starlette(routes=[Mount(well_known, app=mcp), Mount("/api", app=mcp)])

    async def scenario() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            refused = await http.post("/api/mcp", json={})
            metadata = await http.get(f"{well_known}/api/mcp")
            return refused, metadata

    refused, metadata = asyncio.run(scenario())
    assert refused.status_code == 401
    expected = f'Bearer resource_metadata="http://localhost{well_known}/api/mcp"'
    assert refused.headers["www-authenticate"] == expected
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == resource


def test_the_metadata_to_a_cors_origin_names_one_allowed_origin() -> None:
    """Readable from any origin already: the CORS origin adds no second header, which a
    browser would refuse."""
    from snodo.auth import AccessToken, ProtectedResource
    from snodo.server import Server
    from snodo.transports.http import HttpApp

    class Unused:
        async def verify(self, token: str) -> AccessToken:
            raise AssertionError("no token is sent")

    protected = ProtectedResource("http://localhost/mcp", ["https://auth.example.com"], Unused())
    app = HttpApp(
        Server("protected", "1.0.0", authorization=protected), cors_origins=["http://app.test"]
    )

    async def scenario() -> httpx.Response:
        transport = httpx.ASGITransport(app)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
            return await http.get(
                "/.well-known/oauth-protected-resource/mcp", headers={"origin": "http://app.test"}
            )

    answer = asyncio.run(scenario())
    assert answer.status_code == 200
    assert answer.headers.get_list("access-control-allow-origin") == ["*"]
    assert "www-authenticate" in answer.headers["access-control-expose-headers"]


# -- the OAuth proxy under a mount: docs/examples/fastapi_oauth.py, starlette_oauth.py ------


def sign_in_program(program: str, idp: Provider) -> Any:
    """``program`` served by uvicorn, configured for the loopback provider, which knows
    the callback under its mount."""

    def command(port: int) -> list[str]:
        public = f"http://127.0.0.1:{port}"
        idp.add_client(redirect_uris=[f"{public}/mcp/auth/callback"])
        env = [
            f"PUBLIC_URL={public}",
            f"OIDC_CONFIG_URL={idp.config_url}",
            f"OIDC_CLIENT_ID={CLIENT_ID}",
            f"OIDC_CLIENT_SECRET={CLIENT_SECRET}",
            "SNODO_AUTH_SECRET=the proxy's secret, shared by its workers",
        ]
        return ["env", *env, *uvicorn(program)(port)]

    return command


@pytest.fixture(scope="module", params=["fastapi_oauth", "starlette_oauth"])
def signing_in(request: pytest.FixtureRequest) -> Iterator[Serving]:
    with serve_provider() as idp, serving(sign_in_program(request.param, idp)) as running:
        yield running


def test_the_proxy_under_a_mount_is_found_from_the_endpoint_alone(signing_in: Serving) -> None:
    """The MCP endpoint is the mount, /mcp (no redirect); its resource metadata is where
    RFC 9728 puts it for that URL, at the host's root, and the authorization server's
    where RFC 8414 puts it for its issuer, the mount; every endpoint it names is under
    the mount, and answers there."""
    from snodo.oauth.challenge import BearerChallenge
    from snodo.oauth.discovery import discover

    mcp = f"{signing_in.base}/mcp"
    refused = httpx.post(mcp, json={}, headers={"accept": "application/json"})
    assert refused.status_code == 401, refused.text
    metadata_url = f"{signing_in.base}/.well-known/oauth-protected-resource/mcp"
    assert refused.headers["www-authenticate"].startswith(
        f'Bearer resource_metadata="{metadata_url}"'
    )
    assert httpx.get(f"{signing_in.base}/.well-known/oauth-protected-resource").status_code == 200

    async def found() -> Any:
        async with httpx.AsyncClient() as http:
            return await discover(http, mcp, BearerChallenge())  # no challenge to go by

    discovery = asyncio.run(found())
    assert (discovery.resource, discovery.issuer) == (mcp, mcp)
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        assert discovery.metadata[name].startswith(mcp + "/"), discovery.metadata
    client = {
        "redirect_uris": ["http://127.0.0.1:9/callback"],
        "token_endpoint_auth_method": "none",
    }
    registered = httpx.post(discovery.metadata["registration_endpoint"], json=client)
    assert registered.status_code == 201, registered.text


def test_a_user_signs_in_through_the_proxy_under_a_mount(signing_in: Serving) -> None:
    from snodo.client import Client
    from snodo.oauth import OAuth

    user = TestUser()

    async def whoami() -> str:
        async with Client.http(f"{signing_in.base}/mcp", auth=OAuth(user_agent=user)) as client:
            text: str = (await client.call_tool("whoami", {})).content[0].text
            return text

    assert asyncio.run(whoami()) == f"{USER['name']} <{USER['email']}>"
    consent, login = user.forms
    assert consent[0] == f"{signing_in.base}/mcp/consent"
    assert login[0].endswith("/login")
    assert any(page.startswith(f"{signing_in.base}/mcp/auth/callback?") for page in user.pages)
