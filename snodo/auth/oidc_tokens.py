"""The OpenID provider's ID token, checked before the proxy believes who signed in.

The ID token is the provider's signed statement of the sign-in (OpenID Connect Core
section 3.1.3.7): its signature must verify under a key of the provider's JWKS (an
asymmetric algorithm the provider announces, never ``none`` nor a shared secret), its
``iss`` be the provider's issuer, its ``aud`` name the proxy's client id (and ``azp``,
when present, be it), ``exp`` and ``iat`` hold with a small leeway for clocks, and its
``nonce`` be the one the proxy sent for this very sign-in, so a token from another
sign-in cannot be replayed into this one. The key set is fetched once and kept; an
unknown key id makes it fetched again once (the provider rotated its keys), at most
once per ``refresh_interval`` seconds so made-up key ids cannot make the proxy
hammer the provider.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

try:
    import httpx
    from joserfc import jws
    from joserfc.errors import JoseError
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.oidc_tokens needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.claims import ClaimsRefused, check_claims
from snodo.auth.jwt import DEFAULT_ALGORITHMS, MAX_TOKEN_CHARS, KeySetCache
from snodo.auth.tokens import VerifierUnavailable

__all__ = ["BadIdToken", "IdTokens"]

TENANT = "{tenantid}"
"""Microsoft Entra's multi-tenant issuer names its tenant so; the token's ``tid`` fills it."""


class BadIdToken(ValueError):
    """An ID token that does not hold up; the sign-in is refused."""


class IdTokens:
    """Verifies one provider's ID tokens, keeping its key set."""

    def __init__(
        self,
        *,
        leeway: int = 60,
        refresh_interval: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.leeway = leeway
        self.clock = clock
        self.keys = KeySetCache(refresh_interval=refresh_interval, clock=clock)

    @property
    def refresh_interval(self) -> float:
        """Seconds between refetches an unknown key id may cause."""
        return self.keys.refresh_interval

    @property
    def fetches(self) -> int:
        """How many times the key set was fetched."""
        return self.keys.fetches

    async def verify(
        self,
        token: Any,
        *,
        config: Mapping[str, Any],
        client_id: str,
        nonce: str,
        http: httpx.AsyncClient,
    ) -> dict[str, Any]:
        """The token's claims once all holds; ``BadIdToken`` when it does not,
        ``VerifierUnavailable`` when the provider's keys cannot be had."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            raise BadIdToken("no usable id_token")
        uri, issuer = config.get("jwks_uri"), config.get("issuer")
        if not isinstance(uri, str) or not isinstance(issuer, str):
            raise VerifierUnavailable("the provider's configuration names no jwks_uri or issuer")
        announced = config.get("id_token_signing_alg_values_supported") or ["RS256"]
        allowed = [a for a in DEFAULT_ALGORITHMS if a in announced]
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError) as exc:
            raise BadIdToken("the id_token is not a JWS") from exc
        if header.get("alg") not in allowed:
            raise BadIdToken(f"the id_token's algorithm {header.get('alg')!r} is not allowed")
        try:
            decoded = await self.keys.decode(token, allowed, http, uri)
        except JoseError as exc:
            raise BadIdToken(f"the id_token's signature: {type(exc).__name__}") from exc
        claims: dict[str, Any] = dict(decoded.claims)
        self._check(claims, issuer, client_id, nonce)
        return claims

    def _check(self, claims: dict[str, Any], issuer: str, client_id: str, nonce: str) -> None:
        if TENANT in issuer and isinstance(claims.get("tid"), str):
            issuer = issuer.replace(TENANT, claims["tid"])
        try:
            check_claims(
                claims,
                issuer=issuer,
                audience=client_id,
                now=int(self.clock()),
                leeway=self.leeway,
                audience_is_client=True,
                required=("sub", "iat"),
                nonce=nonce,
            )
        except ClaimsRefused as exc:
            raise BadIdToken(f"the id_token's claims: {exc}") from None
        if claims.get("azp", client_id) != client_id:
            raise BadIdToken("the id_token was issued to another party")
        if not isinstance(claims["sub"], str) or not claims["sub"]:
            raise BadIdToken("the id_token names no subject")
