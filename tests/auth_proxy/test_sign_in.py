"""A whole sign-in through the proxy with snodo's own client, headless: registration,
consent, the provider's login, the code, the proxy's token, a tool reading its claims."""

from __future__ import annotations

import asyncio

import pytest

from snodo.client import Client
from snodo.oauth import OAuth, OAuthError
from tests.auth_proxy.site import Site
from tests.support.idp import USER, TestUser


def me(site: Site, user: TestUser) -> str:
    async def main() -> str:
        async with Client.http(site.mcp, auth=OAuth(user_agent=user)) as client:
            result = await client.call_tool("me", {})
            text: str = result.content[0].text
            return text

    return asyncio.run(main())


def test_a_client_signs_in_through_the_proxy_and_a_tool_reads_the_claims(site: Site) -> None:
    user = TestUser()
    expected = f"{USER['sub']} {USER['email']} {USER['name']} notes:read notes:write"
    assert me(site, user) == expected
    consent, login = user.forms
    assert consent[0] == site.base + "/consent" and consent[1]["decision"] == "allow"
    assert login[0] == site.idp.url + "/login"
    # The provider saw the server's own redirect URI and client, never the MCP client's.
    form, _ = site.idp.token_requests[-1]
    assert form["redirect_uri"] == site.base + "/auth/callback"
    assert form["code_verifier"]


def test_a_user_who_does_not_consent_is_not_signed_in(site: Site) -> None:
    user = TestUser(approve=False)
    with pytest.raises(OAuthError, match="access_denied"):
        me(site, user)
    assert len(user.forms) == 1  # the consent page; the provider was never reached
    assert not any(page.startswith(site.idp.url) for page in user.pages)


def test_a_failed_login_at_the_provider_is_access_denied(site: Site) -> None:
    site.idp.deny_login = True
    try:
        with pytest.raises(OAuthError, match="access_denied"):
            me(site, TestUser())
    finally:
        site.idp.deny_login = False


def test_a_headless_user_agent_that_approves_passes_the_consent_page(site: Site) -> None:
    """docs/oauth.md's way for tests: ``HeadlessUserAgent(approve=True)`` presses the
    consent page's Allow and the provider's sign-in, as a person who approves would;
    without ``approve`` the consent page stops it."""
    from snodo.oauth import HeadlessUserAgent

    async def call(agent: HeadlessUserAgent) -> str:
        async with Client.http(site.mcp, auth=OAuth(user_agent=agent)) as client:
            text: str = (await client.call_tool("me", {})).content[0].text
            return text

    expected = f"{USER['sub']} {USER['email']} {USER['name']} notes:read notes:write"
    assert asyncio.run(call(HeadlessUserAgent(approve=True))) == expected
    with pytest.raises(OAuthError, match="answered 200 without redirecting back"):
        asyncio.run(call(HeadlessUserAgent()))
