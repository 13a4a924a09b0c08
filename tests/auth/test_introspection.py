"""IntrospectionVerifier against an in-process authorization server (RFC 7662)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from snodo.auth import InvalidToken, ProtectedResource, Refused, VerifierUnavailable
from snodo.auth.introspection import IntrospectionVerifier
from tests.auth.issuer import CLIENT_ID, CLIENT_SECRET, Issuer, basic

RESOURCE = "https://mcp.example.com/mcp"


def verifier(issuer: Issuer, **options: Any) -> IntrospectionVerifier:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=issuer))
    return IntrospectionVerifier(
        issuer.url,
        RESOURCE,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        http=http,
        **options,
    )


def active(**extra: Any) -> dict[str, Any]:
    return {
        "active": True,
        "sub": "alice",
        "scope": "files:read files:write",
        "aud": RESOURCE,
        "iss": "https://as.example",
        "exp": int(time.time()) + 300,
        "client_id": "app",
        **extra,
    }


def test_active_token_through_the_discovered_endpoint() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer)
    token = issuer.opaque_token(active())
    verified = asyncio.run(check.verify(token))
    assert verified.subject == "alice"
    assert verified.scopes == frozenset({"files:read", "files:write"})
    assert verified.client_id == "app"
    assert issuer.fetches == {"/.well-known/oauth-authorization-server": 1, "/introspect": 1}
    # client_secret_basic, form-encoded first (RFC 6749 section 2.3.1)
    assert issuer.introspection_auth == [
        "Basic cmVzb3VyY2Utc2VydmVyOnMzY3JldCUzQXdpdGglMkZvZGQrY2hhcnM="
    ]
    assert issuer.introspection_auth == [basic(CLIENT_ID, CLIENT_SECRET)]


def test_every_request_asks_again() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer, endpoint="https://as.example/introspect")
    token = issuer.opaque_token(active())

    async def twice() -> None:
        await check.verify(token)
        issuer.opaque[token] = {"active": False}  # revoked
        with pytest.raises(InvalidToken):
            await check.verify(token)

    asyncio.run(twice())
    assert issuer.fetches == {"/introspect": 2}


def test_refusals() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer)
    now = int(time.time())
    refused = {
        "inactive": {"active": False, "sub": "alice", "aud": RESOURCE},
        "active as a string": active(active="true"),
        "unknown token": None,
        "expired": active(exp=now - 60),
        "not yet valid": active(nbf=now + 60),
        "other issuer": active(iss="https://other.example"),
        "other audience": active(aud="https://other.example/mcp"),
        "no audience": {k: v for k, v in active().items() if k != "aud"},
        "no subject": {k: v for k, v in active().items() if k not in ("sub", "client_id")},
    }

    async def verdict(answer: dict[str, Any] | None) -> str:
        token = issuer.opaque_token(answer) if answer is not None else "never-issued"
        try:
            await check.verify(token)
        except InvalidToken:
            return "refused"
        return "accepted"

    verdicts = {what: asyncio.run(verdict(answer)) for what, answer in refused.items()}
    assert verdicts == dict.fromkeys(refused, "refused")
    assert asyncio.run(verdict(active())) == "accepted"


def test_audience_may_be_optional() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer, require_audience=False)
    token = issuer.opaque_token({k: v for k, v in active().items() if k != "aud"})
    assert asyncio.run(check.verify(token)).subject == "alice"
    mismatched = issuer.opaque_token(active(aud="https://other.example/mcp"))
    with pytest.raises(InvalidToken):
        asyncio.run(check.verify(mismatched))


def test_server_errors_are_unavailable_not_invalid() -> None:
    issuer = Issuer("https://as.example")
    issuer.introspection_status = 500
    check = verifier(issuer)
    token = issuer.opaque_token(active())
    with pytest.raises(VerifierUnavailable):
        asyncio.run(check.verify(token))
    protected = ProtectedResource(RESOURCE, [issuer.url], check)
    with pytest.raises(Refused) as refusal:
        asyncio.run(protected.authorize({"authorization": f"Bearer {token}"}))
    assert refusal.value.status == 503


def test_inactive_token_through_the_protected_resource_is_401() -> None:
    issuer = Issuer("https://as.example")
    protected = ProtectedResource(
        RESOURCE, [issuer.url], verifier(issuer), scopes_supported=["files:read"]
    )
    token = issuer.opaque_token({"active": False})
    with pytest.raises(Refused) as refusal:
        asyncio.run(protected.authorize({"authorization": f"Bearer {token}"}))
    assert refusal.value.status == 401
    assert refusal.value.www_authenticate == (
        'Bearer error="invalid_token", resource_metadata='
        '"https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read"'
    )
    good = issuer.opaque_token(active(scope="files:read"))
    authorized = asyncio.run(protected.authorize({"authorization": f"Bearer {good}"}))
    assert (authorized.principal, authorized.scopes) == ("alice", frozenset({"files:read"}))


def test_credentials_come_in_pairs() -> None:
    with pytest.raises(ValueError, match="together"):
        IntrospectionVerifier("https://as.example", RESOURCE, client_id="only")
