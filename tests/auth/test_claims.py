"""One claims check for every JWT snodo verifies (``snodo.auth.claims``): an
authorization server's access token (``JwtVerifier``), the OAuth proxy's own
(``TokenMinter``) and an identity provider's ID token (``IdTokens``) take the same
registered claims the same way, each signed for real and verified end to end.

Each kept a copy of the check before: the same joserfc registry spelt three ways, and the
audience, subject and nonce checks around it in each. Where two of them read a header
both read ``typ`` as a plain string, so RFC 9068's ``application/at+jwt`` was refused
where ``at+jwt`` passed; it is a media type.
"""

from __future__ import annotations

import asyncio
import math
import secrets
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey

from snodo.auth import InvalidToken
from snodo.auth.claims import ClaimsRefused, check_claims, type_matches
from snodo.auth.jwt import JwtVerifier
from snodo.auth.oidc_tokens import BadIdToken, IdTokens
from snodo.auth.proxy_store import MemoryProxyStore, derive
from snodo.auth.proxy_tokens import TokenMinter, family_key
from tests.auth.issuer import Issuer

RESOURCE = "https://mcp.example.com/mcp"
CLIENT_ID = "proxy-client"
NOW = 1_800_000_000
LEEWAY = 30

CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "as issued": ({}, True),
    "expired within the leeway": ({"exp": NOW - 10}, True),
    "expired beyond the leeway": ({"exp": NOW - 31}, False),
    "exp a float": ({"exp": NOW + 0.5}, True),
    "exp NaN": ({"exp": math.nan}, False),
    "exp infinite": ({"exp": math.inf}, False),
    "exp a boolean": ({"exp": True}, False),
    "exp a string": ({"exp": str(NOW + 300)}, False),
    "no exp": ({"exp": None}, False),
    "nbf within the leeway": ({"nbf": NOW + 10}, True),
    "nbf beyond the leeway": ({"nbf": NOW + 31}, False),
    "nbf NaN": ({"nbf": math.nan}, False),
    "iat beyond the leeway": ({"iat": NOW + 31}, False),
    "iat infinite": ({"iat": -math.inf}, False),
    "another issuer": ({"iss": "https://other.example"}, False),
    "no issuer": ({"iss": None}, False),
    "sub a number": ({"sub": 7}, False),
    "jti a number": ({"jti": 7}, False),
    "no aud": ({"aud": None}, False),
    "aud a list with a number": ({"aud": "LIST", "_extra_aud": 5}, False),
}
"""Changes to a token each verifier would accept, and whether each must still accept it."""


def changed(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    claims = dict(base)
    extra = changes.get("_extra_aud")
    for name, value in changes.items():
        if name == "_extra_aud":
            continue
        if value is None:
            claims.pop(name, None)
        elif value == "LIST":
            claims[name] = [claims[name], extra]
        else:
            claims[name] = value
    return claims


def base_claims(issuer: str, audience: str) -> dict[str, Any]:
    return {"iss": issuer, "sub": "alice", "aud": audience, "iat": NOW, "exp": NOW + 300}


def access_verdicts(changes: dict[str, Any]) -> bool:
    """An authorization server's access token, checked by JwtVerifier."""
    issuer = Issuer("https://as.example")
    claims = changed(base_claims(issuer.url, RESOURCE), changes)
    token = jwt.encode({"alg": "ES256", "kid": issuer.keys[0].kid}, claims, issuer.keys[0])
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=issuer))
    verifier = JwtVerifier(issuer.url, RESOURCE, http=http, clock=lambda: NOW, leeway=LEEWAY)
    try:
        asyncio.run(verifier.verify(token))
    except InvalidToken:
        return False
    return True


def proxy_verdicts(changes: dict[str, Any], typ: str = "at+jwt") -> bool:
    """The OAuth proxy's own access token, checked by the proxy as its resource server."""
    secret, store = secrets.token_bytes(32), MemoryProxyStore()
    minter = TokenMinter(
        secret, "https://mcp.example.com", RESOURCE, store, leeway=LEEWAY, clock=lambda: NOW
    )
    claims = changed({**base_claims(minter.issuer, RESOURCE), "fam": "f1"}, changes)
    key = OctKey.import_key(derive(secret, "jwt"))
    token = jwt.encode({"alg": "HS256", "typ": typ}, claims, key, algorithms=["HS256"])

    async def verify() -> None:
        await store.put(family_key("f1"), b"1", None)
        await minter.verify(token)

    try:
        asyncio.run(verify())
    except InvalidToken:
        return False
    return True


def id_token_verdicts(changes: dict[str, Any]) -> bool:
    """A provider's ID token, checked by the proxy before it believes a sign-in."""
    issuer = Issuer("https://idp.example")
    claims = changed({**base_claims(issuer.url, CLIENT_ID), "nonce": "n-1"}, changes)
    token = jwt.encode({"alg": "ES256", "kid": issuer.keys[0].kid}, claims, issuer.keys[0])
    config = {
        "issuer": issuer.url,
        "jwks_uri": f"{issuer.url}/jwks.json",
        "id_token_signing_alg_values_supported": ["ES256"],
    }

    async def verify() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=issuer)) as http:
            await IdTokens(leeway=LEEWAY, clock=lambda: NOW).verify(
                token, config=config, client_id=CLIENT_ID, nonce="n-1", http=http
            )

    try:
        asyncio.run(verify())
    except BadIdToken:
        return False
    return True


VERIFIERS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "access token": access_verdicts,
    "proxy token": proxy_verdicts,
    "id token": id_token_verdicts,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_kind_of_jwt_takes_the_registered_claims_alike(case: str) -> None:
    changes, accepted = CASES[case]
    verdicts = {kind: verdict(changes) for kind, verdict in VERIFIERS.items()}
    assert verdicts == dict.fromkeys(VERIFIERS, accepted)


def test_what_only_an_id_token_needs() -> None:
    """Beyond the registered claims: a subject, an issue time and this sign-in's nonce."""
    assert id_token_verdicts({"sub": None}) is False
    assert id_token_verdicts({"iat": None}) is False
    assert id_token_verdicts({"nonce": "n-2"}) is False
    assert id_token_verdicts({"aud": [CLIENT_ID, "another-client"]}) is True
    assert id_token_verdicts({"aud": CLIENT_ID.upper()}) is False  # a client id, exactly
    # An access token without an issue time, or with a resource URI written otherwise.
    assert access_verdicts({"iat": None}) is True
    assert access_verdicts({"aud": "HTTPS://MCP.EXAMPLE.COM/mcp"}) is True


@pytest.mark.parametrize(
    ("typ", "accepted"),
    [("at+jwt", True), ("application/at+jwt", True), ("AT+JWT", True), ("JWT", False)],
)
def test_the_proxy_and_a_typed_verifier_read_typ_as_a_media_type(typ: str, accepted: bool) -> None:
    assert proxy_verdicts({}, typ=typ) is accepted
    issuer = Issuer("https://as.example")
    token = issuer.mint(RESOURCE, header={"alg": "ES256", "kid": issuer.keys[0].kid, "typ": typ})
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=issuer))
    verifier = JwtVerifier(issuer.url, RESOURCE, http=http, token_type="at+jwt")
    try:
        asyncio.run(verifier.verify(token))
    except InvalidToken:
        assert not accepted
    else:
        assert accepted


def test_type_matches_implies_the_application_prefix() -> None:
    assert type_matches("dpop+jwt", "application/dpop+jwt")
    assert not type_matches("at+jwt", "application/jwt")
    assert not type_matches(None, "at+jwt")
    assert not type_matches("text/at+jwt", "at+jwt")


def test_a_refusal_names_the_claim_for_the_log() -> None:
    claims = base_claims("https://as.example", RESOURCE) | {"exp": math.nan}
    with pytest.raises(ClaimsRefused, match="exp"):
        check_claims(claims, issuer="https://as.example", audience=RESOURCE, now=NOW, leeway=0)
