"""Signing in through snodo's OAuth proxy from other clients, headless.

The server (``snodo run tests/auth_proxy/servers.py:server``) is an ``OIDCProxy`` in
front of the loopback provider of tests/support/idp.py, which has no registration
endpoint. Each client registers at the proxy, sends the test user to its authorization
endpoint (the user approves the proxy's consent page and signs in at the provider),
redeems the code, and calls ``me``, a tool that reads the user's claims from
``ctx.access_token``: the official Python SDK's client (mcp 2.3.0), the official
TypeScript client, and ``snodo call --oauth`` with the test user as its browser. Then
two ``snodo run`` workers sharing a Redis store: snodo's client signs in on the first
(the code is minted there, at the provider's redirect back) and redeems the code and
calls the tool on the second.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.client import Client
from snodo.core.http_headers import request_headers
from snodo.oauth import OAuth
from tests.support.idp import USER, Provider, TestUser, serve_provider
from tests.support.paths import ROOT
from tests.support.processes import free_port, snodo_run
from tests.support.processes import serving as running
from tests.support.wire import VERSION, request

TARGET = "tests/auth_proxy/servers.py:server"
CLAIMS = f"{USER['sub']} {USER['email']} {USER['name']} notes:read notes:write"
"""What ``me`` answers for the test user with the scopes the server lists."""
REDIRECT = "http://127.0.0.1:9/callback"


@dataclass
class Worker:
    address: str
    base: str

    @property
    def mcp(self) -> str:
        return self.base + "/mcp"


@contextlib.contextmanager
def worker(idp: Provider, store: str = "", base: str | None = None) -> Iterator[Worker]:
    """One ``snodo run`` of the proxied server; ``base``: the public address it signs
    users in under (another worker's, when they share a store), else its own."""
    started: list[Worker] = []

    def command(port: int) -> list[str]:
        address = f"http://127.0.0.1:{port}"
        started.append(Worker(address, base or address))
        idp.add_client(redirect_uris=[started[-1].base + "/auth/callback"])
        env = [f"TEST_IDP={idp.url}", f"TEST_BASE={started[-1].base}", f"TEST_STORE={store}"]
        return ["env", *env, *snodo_run(TARGET, "http", "--port", str(port))]

    with running(command):
        yield started[-1]


@dataclass
class Site:
    idp: Provider
    server: Worker


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve_provider() as idp, worker(idp) as server:
        yield Site(idp, server)


# -- the official Python SDK --------------------------------------------------------------


def test_the_official_python_client_signs_in_and_reads_the_claims(site: Site) -> None:
    auth = pytest.importorskip("mcp.client.auth")
    from mcp.client import Client as SdkClient
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    httpx2 = pytest.importorskip("httpx2")
    user = TestUser()
    came_back: list[str] = []

    class Storage:
        def __init__(self) -> None:
            self.tokens: Any = None
            self.client: Any = None

        async def get_tokens(self) -> Any:
            return self.tokens

        async def set_tokens(self, tokens: Any) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> Any:
            return self.client

        async def set_client_info(self, client_info: Any) -> None:
            self.client = client_info

    async def redirect(url: str) -> None:
        came_back.append(await user.authorize(url, REDIRECT))

    async def callback() -> Any:
        params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(came_back[-1]).query))
        return AuthorizationCodeResult(
            code=params["code"], state=params.get("state"), iss=params.get("iss")
        )

    storage = Storage()
    provider = auth.OAuthClientProvider(
        server_url=site.server.mcp,
        client_metadata=OAuthClientMetadata(
            client_name="official python client",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )

    async def scenario() -> str:
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            transport = streamable_http_client(site.server.mcp, http_client=http)
            async with SdkClient(transport, mode="2026-07-28") as client:
                result = await client.call_tool("me", {})
                assert not result.is_error, result
                text: str = result.content[0].text
                return text

    assert asyncio.run(asyncio.wait_for(scenario(), 120)) == CLAIMS
    assert len(came_back) == 1 and storage.client is not None
    # the proxy's consent page, then the provider's sign-in page
    assert [action for action, _ in user.forms] == [
        site.server.base + "/consent",
        site.idp.url + "/login",
    ]


# -- the official TypeScript client ----------------------------------------------------------


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_official_typescript_client_signs_in_and_reads_the_claims(site: Site) -> None:
    client_dir = ROOT / "interop" / "official_client"
    if not (client_dir / "node_modules" / "@modelcontextprotocol" / "client").is_dir():
        pytest.skip("interop/official_client is not installed (bash scripts/interop does it)")
    run = subprocess.run(
        ["node", str(client_dir / "check_oauth.mjs"), site.server.mcp],
        cwd=ROOT,
        env={**os.environ, "SNODO_PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "official client (oauth): 6 passed, 0 failed" in run.stdout, output
    assert f"me: {CLAIMS}\n" in run.stdout, output


# -- snodo's command line -----------------------------------------------------------------


def test_snodo_call_oauth_signs_in_with_the_test_user_as_browser(
    site: Site, tmp_path: Path
) -> None:
    browser = f"{sys.executable} -m tests.support.idp %s"
    # The sign-in is kept (snodo.oauth.kept): in a folder of this test's own.
    env = {**os.environ, "BROWSER": browser, "PYTHONPATH": str(ROOT)}
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "snodo", "call", site.server.mcp, "me", "--oauth"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == CLAIMS, run.stdout + run.stderr
    assert f"authorize in your browser: {site.server.base}/authorize?" in run.stderr


def test_snodo_call_oauth_fails_when_the_user_refuses(site: Site, tmp_path: Path) -> None:
    browser = f"{sys.executable} -m tests.support.idp --deny %s"
    env = {**os.environ, "BROWSER": browser, "PYTHONPATH": str(ROOT)}
    env["XDG_CONFIG_HOME"] = str(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "snodo", "call", site.server.mcp, "me", "--oauth"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode != 0
    assert "access_denied" in run.stderr, run.stdout + run.stderr
    assert CLAIMS not in run.stdout


# -- two workers sharing Redis ------------------------------------------------------------------


def ping(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(64) == b"+PONG\r\n"
    return False


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (CI: apt-get install redis-server)")
    port = free_port()
    options = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(
        [binary, *options, "--dir", str(workdir), "--loglevel", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not ping(port):
            assert process.poll() is None and time.monotonic() < deadline, "no redis-server"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


class TokenToSecond(httpx.AsyncBaseTransport):
    """The client's token requests go to the second worker; all else where addressed."""

    def __init__(self, second: str) -> None:
        self.second = httpx.URL(second)
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[tuple[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/token":
            request.url = request.url.copy_with(host=self.second.host, port=self.second.port)
            request.headers["host"] = f"{self.second.host}:{self.second.port}"
        self.sent.append((request.method, str(request.url)))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def call_me(mcp: str, access_token: str) -> str:
    message = request("tools/call", {"name": "me", "arguments": {}})
    headers = {"content-type": "application/json", "accept": "application/json"}
    headers |= request_headers(message["method"], message["params"], VERSION)
    headers["authorization"] = f"Bearer {access_token}"
    answer = httpx.post(mcp, json=message, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    text: str = answer.json()["result"]["content"][0]["text"]
    return text


def test_a_code_minted_on_one_worker_is_redeemed_on_another_sharing_redis(
    tmp_path: Path,
) -> None:
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(redis_server(tmp_path))
        idp = stack.enter_context(serve_provider())
        first = stack.enter_context(worker(idp, url))
        second = stack.enter_context(worker(idp, url, base=first.base))
        user = TestUser()
        routed = TokenToSecond(second.address)
        oauth = OAuth(user_agent=user, transport=routed)

        async def scenario() -> str:
            async with Client.http(first.mcp, auth=oauth) as client:
                result = await client.call_tool("me", {})
            text: str = result.content[0].text  # type: ignore[union-attr]
            return text

        assert asyncio.run(scenario()) == CLAIMS
        # The code was minted by the first worker, at the provider's redirect back...
        callbacks = [page for page in user.pages if "/auth/callback?" in page]
        assert len(callbacks) == 1 and callbacks[0].startswith(first.address + "/")
        # ...and redeemed on the second, whose token both accept.
        posted = [target for method, target in routed.sent if method == "POST"]
        assert [t for t in posted if t.endswith("/token")] == [second.address + "/token"]
        tokens = asyncio.run(oauth.storage.get_tokens())
        assert tokens is not None
        assert call_me(second.address + "/mcp", tokens.access_token) == CLAIMS
