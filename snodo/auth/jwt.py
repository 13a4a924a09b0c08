"""JWT access tokens checked against the authorization server's published keys.

Theory of operation. ``JwtVerifier`` accepts a token only when its signature verifies
under a key of the issuer's JSON Web Key Set (with an asymmetric algorithm from an
allow-list: never ``none``, never a shared secret), its ``iss`` is exactly the issuer,
its ``aud`` names this resource (RFC 8707; RFC 9068 section 4), it has not expired
(``exp`` is required) and is already valid (``nbf``), with a small leeway for clocks
(``snodo.auth.claims``, the one claims check of every JWT snodo verifies). Signatures are
joserfc's; nothing cryptographic is written here.

The key set is found through the issuer's metadata (``snodo.auth.discovery``) unless
``jwks_uri`` is given, fetched on first use, and kept for ``jwks_ttl`` seconds. A token
signed with a key id the cached set lacks triggers one refetch, so a rotated key is
picked up at once; such refetches happen at most once per ``refresh_interval`` seconds,
so tokens with made-up key ids cannot make the server hammer its authorization server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

try:
    import httpx
    from joserfc import jws
    from joserfc import jwt as jose_jwt
    from joserfc.errors import InvalidKeyIdError, JoseError
    from joserfc.jwk import KeySet
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.jwt needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.claims import ClaimsRefused, check_claims, type_matches
from snodo.auth.discovery import OutboundClient, get_json, published_endpoint
from snodo.auth.tokens import (
    AccessToken,
    InvalidToken,
    VerifierUnavailable,
    scope_set,
    subject_of,
)

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier", "KeySetCache"]

DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384")
"""Asymmetric JWS algorithms (RFC 7518) a key set can verify; RS256 is what RFC 9068
requires authorization servers to support."""

MAX_TOKEN_CHARS = 16 * 1024
"""A bearer token longer than this is refused before any parsing."""


class KeySetCache:
    """An issuer's JSON Web Key Set, kept: fetched on first use and once older than
    ``ttl``; a key id it lacks makes it fetched again (the issuer rotated its keys), at
    most once per ``refresh_interval`` seconds. Shared by ``JwtVerifier`` and the OAuth
    proxy's ID-token check."""

    def __init__(
        self,
        *,
        ttl: float = float("inf"),
        refresh_interval: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ttl = ttl
        self.refresh_interval = refresh_interval
        self.clock = clock
        self._keys: KeySet | None = None
        self._fetched_at = float("-inf")
        self._refreshed_at = float("-inf")
        """When an unknown key id last made us refetch (rate-limits such refetches)."""
        self._lock = asyncio.Lock()
        self.fetches = 0
        """How many times the key set was fetched (for monitoring)."""

    async def get(
        self,
        http: httpx.AsyncClient,
        where: str | Callable[[], Awaitable[str]],
        *,
        stale_before: float | None = None,
    ) -> KeySet:
        """The kept set, fetched from ``where`` (a URI, or what finds it) when older
        than ``stale_before`` (or the TTL)."""
        async with self._lock:
            now = self.clock()
            limit = now - self.ttl if stale_before is None else stale_before
            if self._keys is None or self._fetched_at <= limit:
                uri = where if isinstance(where, str) else await where()
                document = await get_json(http, uri)
                self.fetches += 1
                try:
                    self._keys = KeySet.import_key_set(document)
                except (JoseError, KeyError, TypeError, ValueError) as exc:
                    raise VerifierUnavailable(f"{uri} is not a key set") from exc
                self._fetched_at = now
            return self._keys

    async def decode(
        self,
        token: str,
        algorithms: list[str],
        http: httpx.AsyncClient,
        where: str | Callable[[], Awaitable[str]],
    ) -> jose_jwt.Token:
        """``token`` decoded under a key of the set; ``JoseError`` when none verifies it."""
        keys = await self.get(http, where)
        try:
            return jose_jwt.decode(token, keys, algorithms=algorithms)
        except InvalidKeyIdError:
            now = self.clock()
            if self._refreshed_at > now - self.refresh_interval:
                # Refetched lately, perhaps by a request still waiting for it: use that
                # set (the lock waits for a fetch under way), fetch no more.
                keys = await self.get(http, where)
            else:
                self._refreshed_at = now
                keys = await self.get(http, where, stale_before=now)
            return jose_jwt.decode(token, keys, algorithms=algorithms)


class JwtVerifier:
    """Verify JWT access tokens issued by ``issuer`` for ``audience`` (this resource)."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        jwks_uri: str | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        token_type: str | None = None,
        leeway: int = 30,
        jwks_ttl: float = 3600.0,
        refresh_interval: float = 30.0,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        if not self.algorithms or any(a == "none" or a.startswith("HS") for a in self.algorithms):
            raise ValueError("algorithms must be asymmetric JWS algorithms")
        self.token_type = token_type
        """When set (RFC 9068: ``at+jwt``), the ``typ`` header must name it
        (``application/at+jwt`` does, as RFC 9068 section 4 says)."""
        self.leeway = leeway
        self.clock = clock
        self._client = OutboundClient(http)
        self.keys = KeySetCache(ttl=jwks_ttl, refresh_interval=refresh_interval, clock=clock)

    async def aclose(self) -> None:
        """Close the HTTP client, whether made here or passed as ``http``."""
        await self._client.aclose()

    async def _jwks_uri(self) -> str:
        if self.jwks_uri is None:
            self.jwks_uri = await published_endpoint(self._client(), self.issuer, "jwks_uri")
        return self.jwks_uri

    async def verify(self, token: str) -> AccessToken:
        """The ``AccessToken`` once signature, type, issuer, audience and times check out."""
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidToken("token too long")
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError) as exc:
            raise InvalidToken("not a JWS compact serialization") from exc
        if header.get("alg") not in self.algorithms:
            raise InvalidToken(f"algorithm {header.get('alg')!r} is not allowed")
        if self.token_type is not None and not type_matches(header.get("typ"), self.token_type):
            raise InvalidToken("wrong token type")
        try:
            decoded = await self.keys.decode(
                token, list(self.algorithms), self._client(), self._jwks_uri
            )
        except JoseError as exc:
            raise InvalidToken(f"signature: {type(exc).__name__}") from exc
        claims: dict[str, Any] = dict(decoded.claims)
        self._check_claims(claims)
        client_id = claims.get("client_id", claims.get("azp"))
        expires = claims["exp"]
        return AccessToken(
            subject=subject_of(claims),
            scopes=scope_set(claims.get("scope", claims.get("scp"))),
            issuer=self.issuer,
            client_id=client_id if isinstance(client_id, str) else None,
            expires_at=float(expires),
            claims=claims,
        )

    def _check_claims(self, claims: dict[str, Any]) -> None:
        try:
            check_claims(
                claims,
                issuer=self.issuer,
                audience=self.audience,
                now=int(self.clock()),
                leeway=self.leeway,
            )
        except ClaimsRefused as exc:
            raise InvalidToken(f"claims: {exc}") from None
