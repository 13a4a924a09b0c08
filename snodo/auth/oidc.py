"""``OIDCProxy``: the authorization-server proxy for an OpenID provider.

Its endpoints come from the provider's OpenID configuration, read on first use (so a
server starts while its provider is still down). With ``openid`` in the scopes the
identity is the provider's ID token, verified (``snodo.auth.oidc_tokens``) with the
nonce sent for the sign-in, merged with what its userinfo endpoint (or ``verify``)
says of the same subject; without, userinfo's (or ``verify``'s) alone. When the
provider says it names itself in its answers (RFC 9207), the callback's ``iss`` must
be its issuer, so an answer from another provider cannot pass for its own.
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

from snodo.auth.oidc_tokens import BadIdToken, IdTokens
from snodo.auth.proxy import OAuthProxy, Verify
from snodo.auth.proxy_pages import OAuthRefusal
from snodo.auth.tokens import VerifierUnavailable

__all__ = ["OIDCProxy"]

log = logging.getLogger("snodo.auth")

ID_TOKEN_ONLY = frozenset({"iss", "aud", "exp", "iat", "nbf", "nonce", "azp", "at_hash", "c_hash"})
"""The ID token's claims about itself, not about who signed in."""


class OIDCProxy(OAuthProxy):
    """``OAuthProxy`` for an OpenID provider, its endpoints read from ``config_url``
    (its ``/.well-known/openid-configuration``) on first use; the identity its
    verified ID token's (with ``openid`` in the scopes) and its userinfo endpoint's,
    or ``verify``'s when given."""

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
        self.custom_verify = verify is not None
        self.id_tokens = IdTokens()
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

    @property
    def openid(self) -> bool:
        return "openid" in self.scopes

    def provider_params(self, sign_in: Mapping[str, Any]) -> dict[str, str]:
        """The nonce the ID token must carry back (OpenID Connect Core 3.1.2.1)."""
        return {"nonce": sign_in["nonce"]} if self.openid else {}

    async def check_response(self, query: Mapping[str, str]) -> None:
        """RFC 9207: ``iss`` required when the provider announces it, and whenever
        given, its issuer."""
        try:
            config = await self.configuration()
        except (httpx.HTTPError, ValueError):
            raise OAuthRefusal("server_error", "the identity provider cannot be reached") from None
        given = query.get("iss")
        if given is None and config.get("authorization_response_iss_parameter_supported"):
            raise OAuthRefusal("access_denied", "the provider's answer does not name its issuer")
        if given is not None and given != config.get("issuer"):
            raise OAuthRefusal("access_denied", "the answer came from another issuer")

    async def identity(
        self, tokens: Mapping[str, Any], sign_in: Mapping[str, Any], http: httpx.AsyncClient
    ) -> Mapping[str, Any]:
        """The verified ID token's claims, then userinfo's (or ``verify``'s) about the
        same subject over them; without ``openid``, userinfo's (or ``verify``'s)."""
        if not self.openid:
            return await self.verify_identity(tokens["access_token"], http)
        config = await self.configuration()
        try:
            proven = await self.id_tokens.verify(
                tokens.get("id_token"),
                config=config,
                client_id=self.client_id,
                nonce=sign_in["nonce"],
                http=http,
            )
        except BadIdToken as exc:
            log.warning("the provider's id_token was refused: %s", exc)
            raise OAuthRefusal("access_denied", f"the identity provider's {exc}") from None
        except VerifierUnavailable as exc:
            log.warning("the provider's keys cannot be had: %s", exc)
            raise OAuthRefusal(
                "server_error", "the identity provider's signing keys cannot be read"
            ) from None
        proven = {k: v for k, v in proven.items() if k not in ID_TOKEN_ONLY}
        if not self.custom_verify and not isinstance(config.get("userinfo_endpoint"), str):
            return proven
        more = await self.verify_identity(tokens["access_token"], http)
        if more.get("sub") != proven["sub"]:
            raise OAuthRefusal("access_denied", "userinfo names another subject than the id_token")
        return {**proven, **more}
