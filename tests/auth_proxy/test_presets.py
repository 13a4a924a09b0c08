"""The presets: each provider's addresses, and GitHub's user turned into claims."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from snodo.auth import (
    Auth0Proxy,
    EntraProxy,
    GitHubProxy,
    GoogleProxy,
    KeycloakProxy,
    OAuthProxy,
    OIDCProxy,
    OktaProxy,
    WorkOSProxy,
)
from snodo.auth.presets import github_identity

BASE = "https://mcp.example.com"
CREDENTIALS = {"client_id": "id", "client_secret": "secret", "base_url": BASE, "secret": b"s" * 32}


@pytest.mark.parametrize(
    ("proxy", "config_url"),
    [
        (
            GoogleProxy(**CREDENTIALS),
            "https://accounts.google.com/.well-known/openid-configuration",
        ),
        (
            EntraProxy(tenant="contoso.onmicrosoft.com", **CREDENTIALS),
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration",
        ),
        (
            Auth0Proxy(domain="t.eu.auth0.com", **CREDENTIALS),
            "https://t.eu.auth0.com/.well-known/openid-configuration",
        ),
        (
            OktaProxy(domain="org.okta.com", **CREDENTIALS),
            "https://org.okta.com/oauth2/default/.well-known/openid-configuration",
        ),
        (
            WorkOSProxy(authkit_domain="x.authkit.app", **CREDENTIALS),
            "https://x.authkit.app/.well-known/openid-configuration",
        ),
        (
            KeycloakProxy(server_url="https://sso.example.com/", realm="staff", **CREDENTIALS),
            "https://sso.example.com/realms/staff/.well-known/openid-configuration",
        ),
    ],
)
def test_openid_presets_read_their_providers_configuration(
    proxy: OIDCProxy, config_url: str
) -> None:
    assert proxy.config_url == config_url
    assert "openid" in proxy.scopes
    assert proxy.callback_url == BASE + "/auth/callback"
    assert proxy.resource == BASE + "/mcp"
    assert proxy.authorization_servers == (BASE,)


def test_the_github_preset() -> None:
    proxy = GitHubProxy(**CREDENTIALS)
    assert isinstance(proxy, OAuthProxy) and not isinstance(proxy, OIDCProxy)
    assert proxy.authorize_url == "https://github.com/login/oauth/authorize"
    assert proxy.token_url == "https://github.com/login/oauth/access_token"
    assert proxy.scopes == ("read:user", "user:email")


def test_githubs_user_becomes_claims_with_its_primary_verified_email() -> None:
    seen: list[str] = []

    def github(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.path} {request.headers['authorization']}")
        if request.url.path == "/user":
            user = {"id": 583231, "login": "octocat", "name": "The Octocat", "email": None}
            return httpx.Response(200, json=user)
        emails = [
            {"email": "old@example.com", "primary": False, "verified": True},
            {"email": "octo@example.com", "primary": True, "verified": True},
        ]
        return httpx.Response(200, content=json.dumps(emails))

    async def main() -> object:
        async with httpx.AsyncClient(transport=httpx.MockTransport(github)) as http:
            return await github_identity("gho_token", http)

    claims = asyncio.run(main())
    assert claims == {
        "sub": "583231",
        "login": "octocat",
        "preferred_username": "octocat",
        "name": "The Octocat",
        "email": "octo@example.com",
    }
    assert seen == ["/user Bearer gho_token", "/user/emails Bearer gho_token"]
