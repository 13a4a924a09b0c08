"""The browser user agent of docs/examples/oauth_client.py completes a real
authorization: the OAuth client discovers and registers against the fake authorization
server of tests/oauth, the "browser" follows the authorization page's redirect to the
agent's loopback listener over a real socket, and the code it hands back is exchanged
for the token the MCP request then carries."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from types import ModuleType

import httpx

from snodo.client import Client
from snodo.client.transports import HttpTransport
from snodo.oauth import BrowserUserAgent, OAuth
from tests.oauth.fakes import AS1, MCP, AuthServer, World
from tests.support.paths import ROOT
from tests.support.processes import free_port


def _example() -> ModuleType:
    path = ROOT / "docs" / "examples" / "oauth_client.py"
    spec = importlib.util.spec_from_file_location("docs_oauth_client", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_browser_user_agent_brings_the_code_back() -> None:
    _example()  # the example imports and builds as documented
    authorization = AuthServer(AS1)
    world = World({AS1: authorization}, challenge_scope="mcp:basic")
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    visited: list[str] = []

    def browser(url: str) -> None:
        """A browser: the authorization page redirects at once; follow it for real."""
        visited.append(url)
        page = httpx.Client(transport=world.transport()).get(url)
        location = page.headers["location"]
        threading.Thread(target=httpx.get, args=(location,), kwargs={"timeout": 10}).start()

    oauth = OAuth(
        user_agent=BrowserUserAgent(open_page=browser, timeout=10),
        redirect_uri=redirect_uri,
        client_name="docs",
        transport=world.transport(),
    )

    async def main() -> list[str]:
        http = httpx.AsyncClient(transport=world.transport(), auth=oauth)
        async with Client(HttpTransport(MCP, client=http)) as client:
            return [tool.name for tool in await client.list_tools()]

    assert asyncio.run(main()) == ["t"]
    assert len(visited) == 1 and visited[0].startswith(f"{AS1}/authorize?")
    assert authorization.authorizations[0]["redirect_uri"] == redirect_uri
    assert [form["grant_type"] for form, _ in authorization.token_requests] == [
        "authorization_code"
    ]
    assert world.mcp_requests[-1][0] == "Bearer token-as.example.com-1"


def test_snodo_calls_oauth_completes_an_authorization() -> None:
    """The OAuth client ``snodo call --oauth`` builds (snodo.cli.client_commands):
    registered, the page shown (and printed), the code back on its loopback port."""
    from snodo.cli.client_commands import browser_oauth

    authorization = AuthServer(AS1)
    world = World({AS1: authorization}, challenge_scope="mcp:basic")
    visited: list[str] = []

    def browser(url: str) -> None:
        visited.append(url)
        page = httpx.Client(transport=world.transport()).get(url)
        threading.Thread(
            target=httpx.get, args=(page.headers["location"],), kwargs={"timeout": 10}
        ).start()

    oauth = browser_oauth(open_page=browser, transport=world.transport())

    async def main() -> list[str]:
        http = httpx.AsyncClient(transport=world.transport(), auth=oauth)
        async with Client(HttpTransport(MCP, client=http)) as client:
            return [tool.name for tool in await client.list_tools()]

    assert asyncio.run(main()) == ["t"]
    assert len(visited) == 1 and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in visited[0]
