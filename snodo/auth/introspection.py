"""Opaque access tokens checked by asking the authorization server (RFC 7662).

``IntrospectionVerifier`` posts each token to the introspection endpoint (found in the
issuer's metadata unless given), authenticating as a client of that server when
credentials are given (``client_secret_basic``, RFC 6749 section 2.3.1). A token is
accepted only when the answer says ``active: true``, its ``exp`` and ``nbf`` (when
present) hold on this server's clock, its ``iss`` (when present) is the issuer, and its
``aud`` names this resource: an answer without ``aud`` is refused unless
``require_audience=False``, since basic/authorization requires the audience checked.
Every answer is fetched anew: revocation takes effect at once.
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable
from typing import Any

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.introspection needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.discovery import MAX_DOCUMENT_BYTES, OutboundClient, published_endpoint
from snodo.auth.tokens import (
    AccessToken,
    InvalidToken,
    VerifierUnavailable,
    audience_matches,
    scope_set,
    subject_of,
)

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """Verify tokens through ``issuer``'s introspection endpoint for ``audience``."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        endpoint: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        require_audience: bool = True,
        leeway: float = 30.0,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (client_id is None) != (client_secret is None):
            raise ValueError("give client_id and client_secret together")
        self.issuer = issuer
        self.audience = audience
        self.endpoint = endpoint
        self._auth = (
            None
            if client_id is None or client_secret is None
            else httpx.BasicAuth(
                urllib.parse.quote_plus(client_id), urllib.parse.quote_plus(client_secret)
            )
        )
        self.require_audience = require_audience
        self.leeway = leeway
        self.clock = clock
        self._client = OutboundClient(http)

    async def aclose(self) -> None:
        """Close the HTTP client, whether made here or passed as ``http``."""
        await self._client.aclose()

    async def _endpoint(self) -> str:
        if self.endpoint is None:
            self.endpoint = await published_endpoint(
                self._client(), self.issuer, "introspection_endpoint"
            )
        return self.endpoint

    async def _introspect(self, token: str) -> dict[str, Any]:
        endpoint = await self._endpoint()
        try:
            response = await self._client().post(
                endpoint,
                data={"token": token, "token_type_hint": "access_token"},
                headers={"accept": "application/json"},
                auth=self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT,
            )
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"POST {endpoint}: {type(exc).__name__}") from exc
        if response.status_code != 200 or len(response.content) > MAX_DOCUMENT_BYTES:
            raise VerifierUnavailable(f"POST {endpoint}: HTTP {response.status_code}")
        try:
            answer = response.json()
        except ValueError as exc:
            raise VerifierUnavailable(f"POST {endpoint}: not JSON") from exc
        if not isinstance(answer, dict):
            raise VerifierUnavailable(f"POST {endpoint}: not a JSON object")
        return answer

    async def verify(self, token: str) -> AccessToken:
        """Introspect ``token`` and accept it if active, in time, and for this resource."""
        answer = await self._introspect(token)
        if answer.get("active") is not True:
            raise InvalidToken("inactive")
        now = self.clock()
        expires = answer.get("exp")
        if expires is not None:
            if not isinstance(expires, int | float) or isinstance(expires, bool):
                raise InvalidToken("exp is not a number")
            if expires < now - self.leeway:
                raise InvalidToken("expired")
        not_before = answer.get("nbf")
        if isinstance(not_before, int | float) and not_before > now + self.leeway:
            raise InvalidToken("not yet valid")
        issuer = answer.get("iss")
        if issuer is not None and issuer != self.issuer:
            raise InvalidToken("issued by another server")
        checks_audience = "aud" in answer or self.require_audience
        if checks_audience and not audience_matches(answer.get("aud"), self.audience):
            raise InvalidToken("the token is not for this resource")
        client_id = answer.get("client_id")
        return AccessToken(
            subject=subject_of(answer),
            scopes=scope_set(answer.get("scope")),
            issuer=self.issuer,
            client_id=client_id if isinstance(client_id, str) else None,
            expires_at=float(expires) if expires is not None else None,
            claims=answer,
        )
