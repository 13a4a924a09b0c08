"""``ctx.exchange_token``: a handler trades the caller's token for one to call another
service with (RFC 8693 token exchange at the loopback provider of tests/support/idp.py),
kept until it expires. Behind a plain protected resource the caller's own token is
traded (behind the OAuth proxy, tests/auth_proxy/test_exchange.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from snodo.auth import ProtectedResource
from snodo.auth.exchange import ACCESS_TOKEN_TYPE, ExchangeRefused, TokenExchange
from snodo.auth.jwt import JwtVerifier
from snodo.core.context import Context
from snodo.core.http_headers import request_headers
from snodo.server import Server
from snodo.transports.http import HttpApp
from tests.support.idp import (
    CLIENT_ID,
    CLIENT_SECRET,
    TOKEN_EXCHANGE,
    USER,
    Provider,
    serve_provider,
)
from tests.support.wire import VERSION, request

RESOURCE = "http://localhost:8000/mcp"
API = "https://reports.example.com"


def claims_of(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return decoded


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def provider() -> Iterator[Provider]:
    with serve_provider() as idp:
        idp.add_client(CLIENT_ID, CLIENT_SECRET, grant_types=(TOKEN_EXCHANGE,))
        yield idp


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def test_an_exchange_is_kept_until_it_expires_and_asked_again_after(provider: Provider) -> None:
    clock = Clock()
    exchange = TokenExchange(
        provider.token_endpoint, client_id=CLIENT_ID, client_secret=CLIENT_SECRET, clock=clock
    )
    caller = provider.mint_access_token(RESOURCE, scope="notes:read reports:read")

    async def scenario() -> None:
        first = await exchange.exchange(caller, audience=API, scopes=["reports:read"])
        again = await exchange.exchange(caller, audience=API, scopes=["reports:read"])
        assert again is first and exchange.exchanges == 1
        assert first.issued_token_type == ACCESS_TOKEN_TYPE
        assert first.authorization == f"Bearer {first.access_token}"
        got = claims_of(first.access_token)
        assert (got["aud"], got["sub"], got["act"]) == (API, USER["sub"], {"sub": CLIENT_ID})
        assert got["scope"] == "reports:read" and first.scopes == {"reports:read"}
        other = await exchange.exchange(caller, audience=API, scopes=["notes:read"])
        assert other is not first and exchange.exchanges == 2
        # Together, the same asks share one exchange.
        both = await asyncio.gather(
            *(exchange.exchange(caller, audience="https://x.example") for _ in range(3))
        )
        assert len({id(t) for t in both}) == 1 and exchange.exchanges == 3
        clock.now += provider.token_lifetime  # expired: asked again
        renewed = await exchange.exchange(caller, audience=API, scopes=["reports:read"])
        assert renewed is not first and exchange.exchanges == 4

    run(scenario())
    form = provider.exchanges[0]
    assert form["grant_type"] == TOKEN_EXCHANGE
    assert (form["subject_token"], form["subject_token_type"]) == (caller, ACCESS_TOKEN_TYPE)
    assert (form["audience"], form["scope"]) == (API, "reports:read")


def test_a_refused_exchange_names_the_servers_error(provider: Provider) -> None:
    exchange = TokenExchange(issuer=provider.issuer, client_id=CLIENT_ID, client_secret="wrong")
    with pytest.raises(ExchangeRefused) as refused:
        run(exchange.exchange(provider.mint_access_token(RESOURCE), audience=API))
    assert refused.value.error == "invalid_client"
    right = TokenExchange(issuer=provider.issuer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET)
    with pytest.raises(ExchangeRefused) as forged:
        run(right.exchange("not.a.token", audience=API))
    assert forged.value.error == "invalid_grant"
    with pytest.raises(ValueError, match="token_endpoint or the issuer"):
        TokenExchange(client_id="c", client_secret="s")


def protected_server(provider: Provider) -> Server:
    server = Server(
        "exchanging",
        "1.0.0",
        authorization=ProtectedResource(
            RESOURCE,
            [provider.issuer],
            JwtVerifier(provider.issuer, RESOURCE),
            token_exchange=TokenExchange(
                issuer=provider.issuer, client_id=CLIENT_ID, client_secret=CLIENT_SECRET
            ),
        ),
    )

    @server.tool
    async def downstream(ctx: Context) -> str:
        """Call the reports API as the caller."""
        token = await ctx.exchange_token(audience=API, scopes=["reports:read"])
        got = claims_of(token.access_token)
        return f"{got['aud']} {got['sub']} {got['act']['sub']}"

    return server


async def call(app: HttpApp, name: str, token: str) -> dict[str, Any]:
    message = request("tools/call", {"name": name, "arguments": {}})
    headers = {"content-type": "application/json", "accept": "application/json"}
    headers |= request_headers(message["method"], message["params"], VERSION)
    headers["authorization"] = f"Bearer {token}"
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8000") as http:
        answer = await http.post("/mcp", json=message, headers=headers)
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()["result"]
    return result


def test_a_handler_trades_the_callers_token(provider: Provider) -> None:
    server = protected_server(provider)
    app = HttpApp(server)
    caller = provider.mint_access_token(RESOURCE, scope="reports:read")

    async def scenario() -> None:
        for _ in range(2):
            result = await call(app, "downstream", caller)
            assert result["content"][0]["text"] == f"{API} {USER['sub']} {CLIENT_ID}"
        assert server.authorization is not None
        verifier = server.authorization.verifier
        assert isinstance(verifier, JwtVerifier)
        await verifier.aclose()  # its key set's client, opened on this loop

    run(scenario())
    assert len(provider.exchanges) == 1  # kept for the second call
    assert provider.exchanges[0]["subject_token"] == caller


def test_no_exchange_without_a_configured_one() -> None:
    ctx = Context(None, "tools/call", {}, "2026-07-28", {})
    with pytest.raises(RuntimeError, match="no token exchange"):
        run(ctx.exchange_token(audience=API))
