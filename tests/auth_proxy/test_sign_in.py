"""A whole sign-in through the proxy with snodo's own client, headless: registration,
consent, the provider, the code, the proxy's token, a tool reading its claims."""

from __future__ import annotations

import asyncio

from snodo.client import Client
from snodo.oauth import OAuth
from tests.auth_proxy.agent import ConsentingAgent
from tests.auth_proxy.conftest import Site
from tests.auth_proxy.idp import USER


def me(site: Site, agent: ConsentingAgent) -> str:
    async def main() -> str:
        oauth = OAuth(user_agent=agent, refresh_tokens=True)
        async with Client.http(site.mcp, auth=oauth) as client:
            result = await client.call_tool("me", {})
            text: str = result.content[0].text
            return text

    return asyncio.run(main())


def test_a_client_signs_in_through_the_proxy_and_a_tool_reads_the_claims(site: Site) -> None:
    agent = ConsentingAgent()
    assert me(site, agent) == f"{USER['sub']} {USER['email']} {USER['name']} notes:read notes:write"
    assert len(agent.pages) == 1
    assert "snodo-client" in agent.pages[0]
    # The provider saw the server's own redirect URI, state and PKCE, never the client's.
    (asked,) = site.idp.authorizations[-1:]
    assert asked["redirect_uri"] == site.base + "/auth/callback"
    assert asked["code_challenge_method"] == "S256"
    assert asked["scope"] == "openid email profile"


def test_consent_is_remembered_per_browser_and_client(site: Site) -> None:
    agent = ConsentingAgent()
    me(site, agent)
    me(site, agent)  # a new client registration: asked again
    assert len(agent.pages) == 2
    other = ConsentingAgent()
    me(site, other)
    assert len(other.pages) == 1
