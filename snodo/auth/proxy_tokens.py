"""The proxy's own access tokens: JWTs it signs and, as the resource server, verifies.

The proxy is the authorization server and the protected resource at once, so its
tokens are signed with a key of the server's secret (HMAC-SHA256, ``derive``): every
worker holding the secret verifies what any worker issued, and no key set needs
publishing. A token is short-lived, its audience is the MCP endpoint's resource URI,
and it carries the provider identity's claims for ``ctx.access_token``. A token issued
to a client that proved a DPoP key (``snodo.auth.dpop``) names its thumbprint
(``cnf.jkt``) and is taken only with a proof of that key.

Verification accepts only these tokens: a tampered one fails the signature, one of
the provider (signed with its key, or opaque) is not a JWS of this key, and one whose
family was revoked (``snodo.auth.proxy_grants``: a reused refresh token, a
revocation) is refused although its signature holds. No provider token is ever
passed through.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

try:
    from joserfc import jwt as jose_jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import OctKey
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_tokens needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.claims import ClaimsRefused, check_claims, type_matches
from snodo.auth.proxy_store import ProxyStore, derive
from snodo.auth.tokens import AccessToken, InvalidToken, scope_set, subject_of

__all__ = ["RESERVED", "TokenMinter"]

ALGORITHM = "HS256"
TOKEN_TYPE = "at+jwt"
"""RFC 9068's ``typ``: an access token, never to be taken for an ID token."""
MAX_TOKEN_CHARS = 16 * 1024
RESERVED = frozenset(
    {"iss", "aud", "exp", "iat", "nbf", "jti", "scope", "client_id", "fam", "azp", "nonce", "cnf"}
)
"""Claims the proxy sets itself; the provider's of the same names are dropped."""


def family_key(family: str) -> str:
    """The store key saying a token family is alive."""
    return "family:" + family


class TokenMinter:
    """Issues and verifies the proxy's access tokens (a ``TokenVerifier``)."""

    def __init__(
        self,
        secret: bytes,
        issuer: str,
        resource: str,
        store: ProxyStore,
        *,
        lifetime: float = 900.0,
        leeway: int = 30,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._key = OctKey.import_key(derive(secret, "jwt"))
        self.issuer = issuer
        self.resource = resource
        self.store = store
        self.lifetime = lifetime
        self.leeway = leeway
        self.clock = clock

    def mint(
        self,
        claims: Mapping[str, Any],
        client_id: str,
        scopes: Iterable[str],
        family: str,
        jkt: str | None = None,
        lifetime: float | None = None,
    ) -> tuple[str, int]:
        """A signed token for the identity ``claims`` and its lifetime in seconds, bound
        to the DPoP key ``jkt`` when given."""
        now = int(self.clock())
        lifetime = int(self.lifetime if lifetime is None else lifetime)
        payload = {k: v for k, v in claims.items() if k not in RESERVED}
        payload.update(
            iss=self.issuer,
            aud=self.resource,
            iat=now,
            exp=now + lifetime,
            jti=secrets.token_urlsafe(16),
            client_id=client_id,
            scope=" ".join(sorted(scopes)),
            fam=family,
        )
        if jkt is not None:
            payload["cnf"] = {"jkt": jkt}
        header = {"alg": ALGORITHM, "typ": TOKEN_TYPE}
        return jose_jwt.encode(header, payload, self._key, algorithms=[ALGORITHM]), lifetime

    def claims(self, token: str) -> dict[str, Any]:
        """The claims of a token this server signed, still valid; InvalidToken otherwise.
        Whether its family is alive is ``verify``'s question."""
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidToken("token too long")
        try:
            decoded = jose_jwt.decode(token, self._key, algorithms=[ALGORITHM])
        except (JoseError, ValueError, UnicodeError) as exc:
            # Forged, tampered, the provider's, or not a JWS at all.
            raise InvalidToken(f"not a token of this server: {type(exc).__name__}") from None
        if not type_matches(decoded.header.get("typ"), TOKEN_TYPE):
            raise InvalidToken("wrong token type")
        claims: dict[str, Any] = dict(decoded.claims)
        try:
            check_claims(
                claims,
                issuer=self.issuer,
                audience=self.resource,
                now=int(self.clock()),
                leeway=self.leeway,
            )
        except ClaimsRefused as exc:
            raise InvalidToken(f"claims: {exc}") from None
        if not isinstance(claims.get("fam"), str):
            raise InvalidToken("the token names no family")
        return claims

    async def verify(self, token: str) -> AccessToken:
        claims = self.claims(token)
        if await self.store.get(family_key(claims["fam"])) is None:
            raise InvalidToken("the token's grant was revoked")
        client_id = claims.get("client_id")
        return AccessToken(
            subject=subject_of(claims),
            scopes=scope_set(claims.get("scope")),
            issuer=self.issuer,
            client_id=client_id if isinstance(client_id, str) else None,
            expires_at=float(claims["exp"]),
            claims=claims,
        )
