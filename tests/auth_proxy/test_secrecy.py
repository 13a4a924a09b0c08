"""The provider's tokens stay on the server: sealed in the store, never handed to the
client, never in a log line (the proxy served in this process, its logs captured)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from snodo.auth import OIDCProxy
from snodo.auth.proxy_store import MemoryProxyStore
from snodo.client import Client
from snodo.core.context import Context
from snodo.oauth import OAuth, OAuthError
from snodo.server import Server
from snodo.transports.http import HttpApp
from tests.support.idp import (
    CLIENT_ID,
    CLIENT_SECRET,
    Provider,
    TestUser,
    serve_app,
    serve_provider,
)


@dataclass
class Local:
    idp: Provider
    proxy: OIDCProxy
    store: MemoryProxyStore
    base: str


@pytest.fixture
def local() -> Iterator[Local]:
    app: dict[str, Any] = {}

    async def forward(scope: Any, receive: Any, send: Any) -> None:
        await app["app"](scope, receive, send)

    with serve_provider() as idp, serve_app(forward) as base:
        idp.add_client(redirect_uris=[base + "/auth/callback"])
        store = MemoryProxyStore()
        proxy = OIDCProxy(
            config_url=idp.config_url,
            client_id=CLIENT_ID,
            client_secret=CLIENT_SECRET,
            base_url=base,
            secret=b"x" * 32,
            store=store,
        )
        server = Server("local", "1.0.0", state_secret=b"k" * 32, authorization=proxy)

        @server.tool
        def email(ctx: Context) -> str:
            return str(ctx.access_token.claims["email"] if ctx.access_token else None)

        app["app"] = HttpApp(server)
        yield Local(idp, proxy, store, base)


def provider_tokens(local: Local) -> list[str]:
    """The provider's tokens as the proxy keeps them, unsealed here to look for them."""
    found = []
    for key, (sealed, _) in local.store._values.items():
        if key.startswith("upstream:"):
            record = local.proxy.records.vault.open(key, sealed)
            assert record is not None
            found += [record["access_token"], record["refresh_token"]]
            assert record["access_token"].encode() not in sealed  # encrypted at rest
    return found


def test_the_providers_tokens_appear_in_no_log_and_reach_no_client(
    local: Local, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    oauth = OAuth(user_agent=TestUser())

    async def main() -> str:
        async with Client.http(local.base + "/mcp", auth=oauth) as client:
            result = await client.call_tool("email", {})
            text: str = result.content[0].text
            held = await oauth.storage.get_tokens()
            assert held is not None
            received.extend([held.access_token, held.refresh_token or ""])
            return text

    received: list[str] = []
    assert asyncio.run(main()) == "ada@example.org"
    # A failed exchange at the provider is logged, without what it was sent.
    local.idp.clients[CLIENT_ID].secret = "changed at the provider"

    async def refused() -> None:
        async with Client.http(local.base + "/mcp", auth=OAuth(user_agent=TestUser())) as client:
            await client.list_tools()

    with pytest.raises(OAuthError, match="access_denied"):
        asyncio.run(refused())
    assert "token endpoint answered 401" in caplog.text
    secrets = provider_tokens(local)
    assert len(secrets) == 2 and all(secrets)
    for secret in secrets:
        assert secret not in caplog.text
        assert secret not in received
