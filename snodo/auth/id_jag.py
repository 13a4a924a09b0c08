"""Identity assertion grants (ID-JAG) at the OAuth proxy's token endpoint: enterprise-
managed authorization, where the company's identity provider vouches for the user.

Theory of operation. In an enterprise, the MCP client signs the user in at the
company's identity provider once. To reach an MCP server, it exchanges that sign-in
(RFC 8693) at the provider for an Identity Assertion JWT Authorization Grant: a JWT of
type ``oauth-id-jag+jwt`` the provider signs, naming the user (``sub``), this server's
authorization server (``aud``), this MCP server (``resource``), the client it was
issued to (``client_id``), a ``jti`` and a short life. The client presents it here with
the ``jwt-bearer`` grant (RFC 7523) and gets the proxy's own token, with no browser and
no consent page: the provider's policy decided (ext-auth, enterprise-managed
authorization).

``IdentityAssertions`` checks one (RFC 7521 section 5.2, RFC 7523 section 3, and the
extension's section 5.1): the ``typ``; an issuer among ``trusted_issuers`` before any
of its keys is fetched; the signature under a key of that issuer's JWKS (its metadata's
``jwks_uri``, or the one given), with an asymmetric algorithm; ``aud`` the proxy's
issuer; ``exp`` not passed and at most ``max_lifetime`` after ``iat``; a ``sub``;
``client_id`` the client that authenticated; ``resource`` this MCP server. Only then is
its ``jti`` counted in the proxy's store, so a grant is used once across every worker,
and one presented by the wrong client is refused without being spent for the right
one. The scopes are the grant's ``scope`` (narrowed by the request's), or, when the
provider names none, those the request asks of the ones supported, as a sign-in gets.
The user's claims ride in the token as a sign-in's do. Refusals are ``invalid_grant``
whatever the reason (the reason goes to the log).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

try:
    import httpx
    from joserfc import jws
    from joserfc import jwt as jose_jwt
    from joserfc.errors import JoseError
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.id_jag needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.discovery import OutboundClient, published_endpoint
from snodo.auth.jwt import DEFAULT_ALGORITHMS, KeySetCache
from snodo.auth.proxy_pages import OAuthRefusal
from snodo.auth.proxy_store import ProxyStore, digest
from snodo.auth.tokens import VerifierUnavailable, audiences, canonical_resource, scope_set

__all__ = ["ID_JAG_TYPE", "JWT_BEARER", "IdentityAssertions"]

log = logging.getLogger("snodo.auth")

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""RFC 7523 section 2.1: the grant type an assertion is presented with."""
ID_JAG_TYPE = "oauth-id-jag+jwt"
"""The ``typ`` an ID-JAG carries (so no other JWT of the provider passes for one)."""
MAX_ASSERTION_CHARS = 16 * 1024
PROTOCOL_CLAIMS = frozenset(
    {"iss", "aud", "exp", "iat", "nbf", "jti", "scope", "client_id", "resource", "cnf", "azp"}
)
"""The grant's own claims: what remains describes the user."""
NOT_ACCEPTABLE = "the identity assertion is not acceptable"
"""What a client is told, whatever the reason (the log says which)."""


def _unverified_issuer(assertion: str) -> Any:
    """The ``iss`` of a JWS, read before its signature (to choose whose keys check it)."""
    try:
        payload = jws.extract_compact(assertion.encode("ascii")).payload
        return json.loads(payload).get("iss")
    except (JoseError, ValueError, UnicodeError, AttributeError):
        return None


class IdentityAssertions:
    """ID-JAGs the proxy takes: ``OAuthProxy(identity_assertion=...)``.

    ``trusted_issuers`` are the identity providers whose grants are taken, each by its
    issuer URL exactly; their keys are found through their metadata unless
    ``jwks_uris`` names them. ``audience`` is what ``aud`` must name (the proxy's
    issuer, ``base_url``, by default). ``max_lifetime`` bounds ``exp - iat`` (RFC 7523
    asks for short-lived assertions); ``access_lifetime`` is the life of the token
    issued (the proxy's, when None); no refresh token is issued, since the client gets
    a fresh grant from the provider instead. ``claims`` maps the grant's user claims to
    the token's (to namespace a ``sub``, say).
    """

    def __init__(
        self,
        trusted_issuers: Iterable[str],
        *,
        jwks_uris: Mapping[str, str] | None = None,
        audience: str | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        max_lifetime: float = 300.0,
        access_lifetime: float | None = None,
        claims: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
        leeway: int = 30,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.trusted_issuers = tuple(trusted_issuers)
        if not self.trusted_issuers or not all(self.trusted_issuers):
            raise ValueError("name at least one trusted issuer")
        self.jwks_uris = dict(jwks_uris or {})
        self.audience = audience
        self.algorithms = tuple(algorithms)
        if not self.algorithms or any(a == "none" or a.startswith("HS") for a in self.algorithms):
            raise ValueError("algorithms must be asymmetric JWS algorithms")
        self.max_lifetime = max_lifetime
        self.access_lifetime = access_lifetime
        self.map_claims = claims
        self.leeway = leeway
        self.clock = clock
        self._client = OutboundClient(http)
        self._keys = {
            issuer: KeySetCache(ttl=3600.0, clock=clock) for issuer in self.trusted_issuers
        }

    async def aclose(self) -> None:
        """Close the HTTP client, whether made here or passed as ``http``."""
        await self._client.aclose()

    async def _jwks_uri(self, issuer: str) -> str:
        uri = self.jwks_uris.get(issuer)
        if uri is None:
            uri = await published_endpoint(self._client(), issuer, "jwks_uri")
            self.jwks_uris[issuer] = uri
        return uri

    async def accept(
        self,
        form: Mapping[str, str],
        client_id: str,
        *,
        issuer: str,
        resource: str,
        scopes_supported: Iterable[str],
        store: ProxyStore,
    ) -> tuple[dict[str, Any], list[str]]:
        """The user's claims and the scopes to grant for the assertion in ``form``,
        presented by the authenticated ``client_id`` to the proxy whose issuer and
        resource are given; ``OAuthRefusal`` otherwise. The grant is spent in ``store``."""
        assertion = form.get("assertion")
        if not assertion:
            raise OAuthRefusal("invalid_request", "no assertion")
        try:
            claims = await self._verified(assertion, client_id, issuer, resource)
        except _Refused as refused:
            log.info("refused an identity assertion: %s", refused)
            raise OAuthRefusal(
                "invalid_grant", "the identity assertion is not acceptable"
            ) from None
        except VerifierUnavailable as exc:
            log.warning("cannot check identity assertions: %s", exc)
            raise OAuthRefusal(
                "temporarily_unavailable", "the identity provider's keys cannot be read", 503
            ) from None
        # Spent only now: a grant refused above is still good for the client it names.
        key = "id-jag:" + digest(f"{claims['iss']}|{claims['jti']}")
        remaining = float(claims["exp"]) - self.clock() + self.leeway
        if await store.count(key, max(remaining, 1.0)) > 1:
            log.info("refused an identity assertion: its jti was used before")
            raise OAuthRefusal("invalid_grant", NOT_ACCEPTABLE)
        return self._user(claims), self._scopes(claims, form, scopes_supported)

    async def _verified(
        self, assertion: str, client_id: str, issuer: str, resource: str
    ) -> dict[str, Any]:
        if len(assertion) > MAX_ASSERTION_CHARS:
            raise _Refused("too long")
        try:
            header = jws.extract_compact(assertion.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError):
            raise _Refused("not a JWS") from None
        if header.get("typ") != ID_JAG_TYPE:
            raise _Refused(f"typ {header.get('typ')!r} is not {ID_JAG_TYPE}")
        if header.get("alg") not in self.algorithms:
            raise _Refused(f"algorithm {header.get('alg')!r} is not allowed")
        trusted = _unverified_issuer(assertion)
        if trusted not in self._keys:
            raise _Refused(f"issuer {str(trusted)[:200]!r} is not trusted")

        async def where() -> str:
            return await self._jwks_uri(trusted)

        try:
            decoded = await self._keys[trusted].decode(
                assertion, list(self.algorithms), self._client(), where
            )
        except JoseError as exc:
            raise _Refused(f"signature: {type(exc).__name__}") from None
        claims: dict[str, Any] = dict(decoded.claims)
        registry = jose_jwt.JWTClaimsRegistry(
            now=lambda: int(self.clock()),
            leeway=self.leeway,
            iss={"essential": True, "value": trusted},
            exp={"essential": True},
            sub={"essential": True},
            jti={"essential": True},
        )
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise _Refused(f"claims: {exc}") from None
        self._check(claims, client_id, issuer, resource)
        return claims

    def _check(self, claims: Mapping[str, Any], client_id: str, issuer: str, resource: str) -> None:
        wanted = (self.audience or issuer).rstrip("/")
        if wanted not in {aud.rstrip("/") for aud in audiences(claims.get("aud"))}:
            raise _Refused("aud is not this authorization server")
        issued, expires = claims.get("iat"), claims["exp"]
        if not isinstance(expires, int | float) or isinstance(expires, bool):
            raise _Refused("exp is not a number")
        start = issued if isinstance(issued, int | float) and not isinstance(issued, bool) else None
        if start is not None and start > self.clock() + self.leeway:
            raise _Refused("iat is in the future")
        if expires - (self.clock() if start is None else start) > self.max_lifetime:
            raise _Refused(f"lives longer than {self.max_lifetime:g} seconds")
        for name in ("sub", "jti"):
            if not isinstance(claims.get(name), str) or not claims[name]:
                raise _Refused(f"{name} is not a string")
        if claims.get("client_id") != client_id:
            raise _Refused("client_id is not the client that presents it")
        named = claims.get("resource")
        if not isinstance(named, str) or canonical_resource(named.rstrip("/")) != (
            canonical_resource(resource.rstrip("/"))
        ):
            raise _Refused("resource is not this MCP server")

    def _user(self, claims: Mapping[str, Any]) -> dict[str, Any]:
        user = {k: v for k, v in claims.items() if k not in PROTOCOL_CLAIMS}
        mapped = dict(self.map_claims(user)) if self.map_claims is not None else user
        if not isinstance(mapped.get("sub"), str) or not mapped["sub"]:
            raise OAuthRefusal("invalid_grant", "the identity assertion names no subject")
        return mapped

    @staticmethod
    def _scopes(
        claims: Mapping[str, Any], form: Mapping[str, str], supported: Iterable[str]
    ) -> list[str]:
        asked = form.get("scope", "").split()
        if "scope" in claims:
            granted = sorted(scope_set(claims["scope"]))
            return [s for s in granted if s in asked] if asked else granted
        offered = set(supported)
        return sorted({s for s in asked if s in offered} if asked else offered)


class _Refused(Exception):
    """Why an assertion is refused, for the log."""
