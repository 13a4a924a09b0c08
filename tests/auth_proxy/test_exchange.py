"""``ctx.exchange_token`` behind the OAuth proxy: what is traded is the provider's token
the proxy holds for the user's sign-in (the proxy's own means nothing to the provider),
and the provider issues one for the other service on the user's behalf."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from snodo.client import Client
from snodo.oauth import OAuth
from tests.auth_proxy.site import Site
from tests.support.idp import CLIENT_ID, TOKEN_EXCHANGE, USER, TestUser

API = "https://reports.example.com"


def claims_of(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return decoded


def test_the_proxy_trades_the_providers_token_it_holds(site: Site) -> None:
    site.idp.clients[CLIENT_ID].grant_types += (TOKEN_EXCHANGE,)

    async def scenario() -> str:
        async with Client.http(site.mcp, auth=OAuth(user_agent=TestUser())) as client:
            result = await client.call_tool("downstream", {"audience": API})
            text: str = result.content[0].text  # type: ignore[union-attr]
            return text

    exchanged = claims_of(asyncio.run(asyncio.wait_for(scenario(), 60)))
    assert (exchanged["aud"], exchanged["sub"]) == (API, USER["sub"])
    subject = site.idp.exchanges[-1]["subject_token"]
    # The provider's own token for the sign-in, never the proxy's.
    assert claims_of(subject)["iss"] == site.idp.issuer
