"""JwtVerifier against an in-process authorization server (httpx's ASGI transport):
discovery, key-set caching, refetch on an unknown key id and its rate limit, claims."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey, OctKey

from snodo.auth import InvalidToken, ProtectedResource, Refused, VerifierUnavailable
from snodo.auth.jwt import JwtVerifier
from tests.auth.issuer import Issuer

RESOURCE = "https://mcp.example.com/mcp"
JWKS = "/jwks.json"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def verifier(issuer: Issuer, clock: Clock | None = None, **options: Any) -> JwtVerifier:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=issuer))
    return JwtVerifier(issuer.url, RESOURCE, http=http, clock=clock or Clock(), **options)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_keys_found_through_metadata_and_cached() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer)

    async def scenario() -> None:
        for _ in range(3):
            token = await check.verify(issuer.mint(RESOURCE, "files:read files:write"))
            assert token.subject == "alice"
            assert token.scopes == frozenset({"files:read", "files:write"})
            assert token.issuer == "https://as.example"

    run(scenario())
    assert issuer.fetches == {"/.well-known/oauth-authorization-server": 1, JWKS: 1}


class KeylessIssuer(Issuer):
    """Metadata that names no key set."""

    def _documents(self) -> dict[str, Any]:
        documents = super()._documents()
        for document in documents.values():
            document.pop("jwks_uri", None)
        return documents


def test_metadata_naming_no_key_set_is_unavailable_and_says_so() -> None:
    issuer = KeylessIssuer("https://as.example")
    with pytest.raises(VerifierUnavailable, match=r"https://as\.example publishes no jwks_uri"):
        run(verifier(issuer).verify(issuer.mint(RESOURCE)))
    assert JWKS not in issuer.fetches


def test_issuer_with_a_path_uses_path_insertion() -> None:
    issuer = Issuer("https://as.example/tenant1")
    check = verifier(issuer)
    run(check.verify(issuer.mint(RESOURCE)))
    assert issuer.fetches == {
        "/.well-known/oauth-authorization-server/tenant1": 1,
        "/tenant1/jwks.json": 1,
    }


def test_metadata_naming_another_issuer_is_not_used() -> None:
    issuer = Issuer("https://as.example", metadata_issuer="https://evil.example")
    check = verifier(issuer)
    with pytest.raises(VerifierUnavailable):
        run(check.verify(issuer.mint(RESOURCE)))
    assert JWKS not in issuer.fetches
    # Every discovery address was tried, none believed.
    assert issuer.fetches == {
        "/.well-known/oauth-authorization-server": 1,
        "/.well-known/openid-configuration": 1,
    }


def test_unknown_key_id_refetches_the_key_set_once() -> None:
    issuer = Issuer("https://as.example")
    clock = Clock()
    check = verifier(issuer, clock)

    async def scenario() -> None:
        await check.verify(issuer.mint(RESOURCE))
        issuer.rotate()
        rotated = issuer.mint(RESOURCE)
        assert (await check.verify(rotated)).subject == "alice"
        assert issuer.fetches[JWKS] == 2
        await check.verify(rotated)  # the new key is cached now
        assert issuer.fetches[JWKS] == 2

        stranger = ECKey.generate_key("P-256", {"kid": "made-up"})
        for _ in range(5):
            with pytest.raises(InvalidToken):
                await check.verify(issuer.mint(RESOURCE, key=stranger))
        assert issuer.fetches[JWKS] == 2  # refetched for key-2 moments ago: not again

        clock.now += 31
        with pytest.raises(InvalidToken):
            await check.verify(issuer.mint(RESOURCE, key=stranger))
        assert issuer.fetches[JWKS] == 3  # one refetch per interval
        with pytest.raises(InvalidToken):
            await check.verify(issuer.mint(RESOURCE, key=stranger))
        assert issuer.fetches[JWKS] == 3

    run(scenario())


def test_concurrent_tokens_from_a_new_key_share_one_refetch() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer)

    async def scenario() -> None:
        await check.verify(issuer.mint(RESOURCE))
        issuer.rotate()
        tokens = [issuer.mint(RESOURCE, sub=f"user-{i}") for i in range(8)]
        verified = await asyncio.gather(*(check.verify(t) for t in tokens))
        assert [v.subject for v in verified] == [f"user-{i}" for i in range(8)]

    run(scenario())
    assert issuer.fetches[JWKS] == 2


def test_key_set_is_refetched_after_its_lifetime() -> None:
    issuer = Issuer("https://as.example")
    clock = Clock()
    check = verifier(issuer, clock, jwks_ttl=600)

    async def scenario() -> None:
        await check.verify(issuer.mint(RESOURCE))
        clock.now += 599
        await check.verify(issuer.mint(RESOURCE, iat=int(clock.now), exp=int(clock.now) + 60))
        assert issuer.fetches[JWKS] == 1
        clock.now += 2
        await check.verify(issuer.mint(RESOURCE, iat=int(clock.now), exp=int(clock.now) + 60))
        assert issuer.fetches[JWKS] == 2

    run(scenario())


def test_claims_are_checked_with_leeway() -> None:
    issuer = Issuer("https://as.example")
    clock = Clock()
    check = verifier(issuer, clock, leeway=30)
    now = int(clock.now)

    async def verdict(token: str) -> str:
        try:
            await check.verify(token)
        except InvalidToken:
            return "refused"
        return "accepted"

    cases = {
        "expired within leeway": (issuer.mint(RESOURCE, exp=now - 10), "accepted"),
        "expired beyond leeway": (issuer.mint(RESOURCE, exp=now - 31), "refused"),
        "nbf within leeway": (issuer.mint(RESOURCE, nbf=now + 10), "accepted"),
        "nbf beyond leeway": (issuer.mint(RESOURCE, nbf=now + 31), "refused"),
        "no exp": (issuer.mint(RESOURCE, drop=("exp",)), "refused"),
        "no iss": (issuer.mint(RESOURCE, drop=("iss",)), "refused"),
        "other iss": (issuer.mint(RESOURCE, iss="https://as.example/"), "refused"),
        "no aud": (issuer.mint(RESOURCE, drop=("aud",)), "refused"),
        "aud list with ours": (issuer.mint(["https://x.example", RESOURCE]), "accepted"),
        "aud list without ours": (issuer.mint(["https://x.example"]), "refused"),
        "aud of a sibling path": (issuer.mint("https://mcp.example.com/mcp2"), "refused"),
        "aud with upper-case host": (issuer.mint("HTTPS://MCP.EXAMPLE.COM/mcp"), "accepted"),
        "no sub, client_id": (issuer.mint(RESOURCE, drop=("sub",), client_id="c1"), "accepted"),
        "neither sub nor client_id": (issuer.mint(RESOURCE, drop=("sub",)), "refused"),
    }
    for what, (token, expected) in cases.items():
        assert run(verdict(token)) == expected, what
    # Without sub, the client's principal is marked as a client's (not a user "c1").
    client = run(check.verify(issuer.mint(RESOURCE, drop=("sub",), client_id="c1")))
    assert client.subject == "client:c1"


def test_only_allowed_algorithms_and_types() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer, token_type="at+jwt")
    key = issuer.keys[0]
    typed = issuer.mint(RESOURCE, header={"alg": "ES256", "kid": key.kid, "typ": "at+jwt"})
    assert run(check.verify(typed)).subject == "alice"
    with pytest.raises(InvalidToken):
        run(check.verify(issuer.mint(RESOURCE)))  # no typ
    # A shared-secret token whose secret is the public key's JSON: never accepted.
    secret = OctKey.import_key(str(key.as_dict(private=False)).encode())
    forged = issuer.mint(RESOURCE, key=secret, header={"alg": "HS256", "kid": key.kid})  # type: ignore[arg-type]
    with pytest.raises(InvalidToken):
        run(check.verify(forged))
    with pytest.raises(ValueError, match="asymmetric"):
        JwtVerifier("https://as.example", RESOURCE, algorithms=["HS256"])
    with pytest.raises(InvalidToken):
        run(check.verify("x" * 20000))


def test_scopes_in_list_form_and_client_id() -> None:
    issuer = Issuer("https://as.example")
    check = verifier(issuer)
    token = run(check.verify(issuer.mint(RESOURCE, drop=("scope",), scp=["a", "b"], azp="app")))
    assert token.scopes == frozenset({"a", "b"})
    assert token.client_id == "app"
    assert token.claims["azp"] == "app"


def test_an_unreachable_key_set_answers_503() -> None:
    issuer = Issuer("https://as.example")
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=issuer))
    check = JwtVerifier(issuer.url, RESOURCE, jwks_uri="https://as.example/missing.json", http=http)
    protected = ProtectedResource(RESOURCE, [issuer.url], check)
    with pytest.raises(Refused) as refused:
        run(protected.authorize({"authorization": f"Bearer {issuer.mint(RESOURCE)}"}))
    assert refused.value.status == 503
    assert refused.value.www_authenticate is None
    assert refused.value.body == (
        b'{"error":"temporarily_unavailable","error_description":"Try again later"}'
    )
