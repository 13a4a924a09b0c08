"""The proxy set up for the identity providers most teams already use.

Each is ``OAuthProxy`` or ``OIDCProxy`` with the provider's addresses filled in;
everything else (``base_url``, ``store``, ``secret``, the resource's scopes) is passed
through. The provider-side registration each needs is in docs/oauth.md: one web
application whose redirect URI is ``{base_url}/auth/callback``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.presets needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.oidc import OIDCProxy
from snodo.auth.proxy import OAuthProxy

__all__ = [
    "Auth0Proxy",
    "EntraProxy",
    "GitHubProxy",
    "GoogleProxy",
    "KeycloakProxy",
    "OktaProxy",
    "WorkOSProxy",
]

GITHUB_API = "https://api.github.com"
OIDC_SCOPES = ("openid", "email", "profile")


async def github_identity(token: str, http: httpx.AsyncClient) -> Mapping[str, Any]:
    """GitHub's user as claims: ``sub`` its numeric id (a login can be renamed), its
    primary verified email when the profile shows none."""
    headers = {"authorization": f"Bearer {token}", "accept": "application/vnd.github+json"}
    response = await http.get(GITHUB_API + "/user", headers=headers)
    response.raise_for_status()
    user = response.json()
    claims = {
        "sub": str(user["id"]),
        "login": user.get("login"),
        "preferred_username": user.get("login"),
        "name": user.get("name"),
        "email": user.get("email"),
        "picture": user.get("avatar_url"),
    }
    if claims["email"] is None:
        emails = await http.get(GITHUB_API + "/user/emails", headers=headers)
        if emails.status_code == 200:
            primary = [e for e in emails.json() if e.get("primary") and e.get("verified")]
            claims["email"] = primary[0]["email"] if primary else None
    return {k: v for k, v in claims.items() if v is not None}


class GitHubProxy(OAuthProxy):
    """GitHub (an OAuth App, or a GitHub App's user authorization)."""

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        base_url: str,
        scopes: Iterable[str] = ("read:user", "user:email"),
        **options: Any,
    ) -> None:
        super().__init__(
            authorize_url="https://github.com/login/oauth/authorize",
            token_url="https://github.com/login/oauth/access_token",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            scopes=scopes,
            verify=github_identity,
            **options,
        )


class GoogleProxy(OIDCProxy):
    """Google (an OAuth client of type Web application)."""

    def __init__(self, *, client_id: str, client_secret: str, base_url: str, **options: Any):
        options.setdefault("scopes", OIDC_SCOPES)
        options.setdefault("authorize_params", {"access_type": "offline"})
        super().__init__(
            config_url="https://accounts.google.com/.well-known/openid-configuration",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            **options,
        )


class EntraProxy(OIDCProxy):
    """Microsoft Entra ID; ``tenant`` is the directory's id or domain (or
    ``organizations``/``common`` for any work account)."""

    def __init__(
        self, *, tenant: str, client_id: str, client_secret: str, base_url: str, **options: Any
    ):
        options.setdefault("scopes", (*OIDC_SCOPES, "offline_access"))
        super().__init__(
            config_url=f"https://login.microsoftonline.com/{tenant}/v2.0/.well-known/openid-configuration",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            **options,
        )


class Auth0Proxy(OIDCProxy):
    """Auth0; ``domain`` is the tenant's, such as ``example.eu.auth0.com``."""

    def __init__(
        self, *, domain: str, client_id: str, client_secret: str, base_url: str, **options: Any
    ):
        options.setdefault("scopes", (*OIDC_SCOPES, "offline_access"))
        super().__init__(
            config_url=f"https://{domain}/.well-known/openid-configuration",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            **options,
        )


class OktaProxy(OIDCProxy):
    """Okta; ``domain`` is the org's, ``authorization_server`` its custom one."""

    def __init__(
        self,
        *,
        domain: str,
        client_id: str,
        client_secret: str,
        base_url: str,
        authorization_server: str = "default",
        **options: Any,
    ):
        options.setdefault("scopes", (*OIDC_SCOPES, "offline_access"))
        super().__init__(
            config_url=f"https://{domain}/oauth2/{authorization_server}/.well-known/openid-configuration",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            **options,
        )


class WorkOSProxy(OIDCProxy):
    """WorkOS AuthKit; ``authkit_domain`` such as ``example.authkit.app``."""

    def __init__(
        self,
        *,
        authkit_domain: str,
        client_id: str,
        client_secret: str,
        base_url: str,
        **options: Any,
    ):
        options.setdefault("scopes", (*OIDC_SCOPES, "offline_access"))
        super().__init__(
            config_url=f"https://{authkit_domain}/.well-known/openid-configuration",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            **options,
        )


class KeycloakProxy(OIDCProxy):
    """Keycloak; ``server_url`` such as ``https://sso.example.com``, and the realm."""

    def __init__(
        self,
        *,
        server_url: str,
        realm: str,
        client_id: str,
        client_secret: str,
        base_url: str,
        **options: Any,
    ):
        options.setdefault("scopes", OIDC_SCOPES)
        super().__init__(
            config_url=f"{server_url.rstrip('/')}/realms/{realm}/.well-known/openid-configuration",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            **options,
        )
