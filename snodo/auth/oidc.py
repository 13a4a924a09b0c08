"""``OIDCProxy``: the authorization-server proxy for an OpenID provider.

Its endpoints come from the provider's OpenID configuration, read on first use (so a
server starts while its provider is still down), and the identity from its userinfo
endpoint unless ``verify`` is given.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.oidc needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.proxy import OAuthProxy, Verify
from snodo.auth.proxy_pages import OAuthRefusal

__all__ = ["OIDCProxy"]

log = logging.getLogger("snodo.auth")


class OIDCProxy(OAuthProxy):
    """``OAuthProxy`` for an OpenID provider, its endpoints read from ``config_url``
    (its ``/.well-known/openid-configuration``) on first use, the identity from its
    userinfo endpoint unless ``verify`` is given."""

    def __init__(
        self,
        *,
        config_url: str,
        client_id: str,
        client_secret: str,
        base_url: str,
        scopes: Iterable[str] = ("openid", "email", "profile"),
        verify: Verify | None = None,
        **options: Any,
    ) -> None:
        super().__init__(
            authorize_url="",
            token_url="",
            client_id=client_id,
            client_secret=client_secret,
            base_url=base_url,
            scopes=scopes,
            verify=verify or self._userinfo,
            **options,
        )
        self.config_url = config_url
        self._config: dict[str, Any] | None = None
        self._config_lock = asyncio.Lock()

    async def configuration(self) -> dict[str, Any]:
        """The provider's OpenID configuration, fetched once."""
        async with self._config_lock:
            if self._config is None:
                async with self._http() as http:
                    response = await http.get(self.config_url)
                response.raise_for_status()
                config = response.json()
                for name in ("authorization_endpoint", "token_endpoint"):
                    if not isinstance(config.get(name), str):
                        raise ValueError(f"{self.config_url} names no {name}")
                self._config = config
            return self._config

    async def provider_endpoints(self) -> tuple[str, str]:
        """The endpoints the provider's configuration names (503 while unreadable)."""
        try:
            config = await self.configuration()
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("cannot read the provider's configuration: %s", type(exc).__name__)
            raise OAuthRefusal(
                "temporarily_unavailable", "the identity provider cannot be reached", 503
            ) from None
        return config["authorization_endpoint"], config["token_endpoint"]

    async def _userinfo(self, token: str, http: httpx.AsyncClient) -> Mapping[str, Any]:
        endpoint = (await self.configuration()).get("userinfo_endpoint")
        if not isinstance(endpoint, str):
            raise ValueError("the provider names no userinfo_endpoint: pass verify=")
        response = await http.get(endpoint, headers={"authorization": f"Bearer {token}"})
        response.raise_for_status()
        claims = response.json()
        if not isinstance(claims, dict):
            raise ValueError("userinfo is not an object")
        return claims
