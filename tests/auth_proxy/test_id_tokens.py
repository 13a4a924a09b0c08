"""The provider's ID token and its answer checked before the proxy believes them: the
token's signature, issuer, audience, times and nonce; userinfo about the same subject;
the provider's keys refetched once when it rotates them; the callback's ``iss``
(RFC 9207). Each refusal ends at the client's redirect URI as an OAuth error."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from joserfc.jwk import RSAKey

from snodo.auth.oidc_tokens import BadIdToken, IdTokens
from tests.auth_proxy.flows import register, sign_in, tokens, verifier
from tests.auth_proxy.site import Site, proxied
from tests.support.idp import CLIENT_ID, USER, Provider, serve_provider


@pytest.fixture
def idp_site(site: Site) -> Iterator[Site]:
    """The module's site, its provider's knobs put back after each test."""
    yield site
    idp = site.idp
    idp.id_token_claims, idp.id_token_key, idp.userinfo_claims = {}, None, {}
    idp.answer_iss, idp.jwks_down = "", False


def refused(site: Site) -> dict[str, str]:
    """A sign-in's answer at the client's redirect URI, checked to be an error."""
    answer = sign_in(site, register(site)["client_id"], verifier())
    assert "code" not in answer and answer["state"] == "st-1", answer
    assert answer["iss"] == site.base and answer["error_description"]
    return answer


def test_the_nonce_is_sent_and_the_verified_id_token_signs_the_user_in(idp_site: Site) -> None:
    found = tokens(idp_site, register(idp_site)["client_id"])
    assert found["access_token"]
    # What the provider was sent: a nonce, fresh per sign-in.
    nonces = {code.nonce for code in idp_site.idp._codes.values()}
    assert None not in nonces and len(nonces) == len(idp_site.idp._codes)


NOW = int(time.time())


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"aud": "another-client"}, "not for this client"),
        ({"aud": ["mcp-server", "other"], "azp": "other"}, "another party"),
        ({"iss": "https://elsewhere.example"}, "claims"),
        ({"nonce": "a nonce of another sign-in"}, "claims"),
        ({"nonce": None}, "claims"),
        ({"exp": NOW - 3600, "iat": NOW - 7200}, "claims"),
        ({"iat": NOW + 3600, "exp": NOW + 7200}, "claims"),
        ({"iat": None}, "claims"),
    ],
)
def test_an_id_token_that_does_not_hold_up_is_access_denied(
    idp_site: Site, claims: dict[str, Any], why: str
) -> None:
    idp_site.idp.id_token_claims = claims
    answer = refused(idp_site)
    assert answer["error"] == "access_denied" and why in answer["error_description"]


def test_an_id_token_signed_by_an_unpublished_key_is_access_denied(idp_site: Site) -> None:
    idp_site.idp.id_token_key = RSAKey.generate_key(2048, {"kid": "key-1", "alg": "RS256"})
    answer = refused(idp_site)
    assert answer["error"] == "access_denied" and "signature" in answer["error_description"]


def test_no_id_token_is_access_denied(idp_site: Site) -> None:
    original = idp_site.idp._issue

    def without(*args: Any, **kwargs: Any) -> dict[str, Any]:
        answer = original(*args, **kwargs)
        answer.pop("id_token", None)
        return answer

    idp_site.idp._issue = without  # type: ignore[method-assign]
    try:
        assert refused(idp_site)["error"] == "access_denied"
    finally:
        del idp_site.idp._issue


def test_userinfo_about_another_subject_is_access_denied(idp_site: Site) -> None:
    idp_site.idp.userinfo_claims = {"sub": "someone else"}
    answer = refused(idp_site)
    assert answer["error"] == "access_denied" and "subject" in answer["error_description"]


def test_a_rotated_key_is_fetched_once(idp_site: Site) -> None:
    idp = idp_site.idp
    tokens(idp_site, register(idp_site)["client_id"])
    before = idp.requests["/jwks"]
    idp.rotate()
    tokens(idp_site, register(idp_site)["client_id"])
    tokens(idp_site, register(idp_site)["client_id"])
    assert idp.requests["/jwks"] == before + 1


def test_the_callback_must_name_the_providers_issuer(idp_site: Site) -> None:
    exchanged = idp_site.idp.requests["/token"]
    idp_site.idp.answer_iss = None  # the provider says it names itself, and does not
    answer = refused(idp_site)
    assert answer["error"] == "access_denied" and "issuer" in answer["error_description"]
    idp_site.idp.answer_iss = "https://mix-up.example"
    answer = refused(idp_site)
    assert answer["error"] == "access_denied" and "issuer" in answer["error_description"]
    assert idp_site.idp.requests["/token"] == exchanged  # its code never exchanged


def test_unreadable_keys_are_server_error() -> None:
    with serve_provider() as idp, proxied(idp) as site:
        idp.jwks_down = True
        answer = refused(site)
        assert answer["error"] == "server_error" and "keys" in answer["error_description"]
        idp.jwks_down = False
        assert tokens(site, register(site)["client_id"])["access_token"]


def _id_token(idp: Provider, key: RSAKey | None = None, **extra: Any) -> str:
    now = int(time.time())
    claims = {"iss": idp.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + 3600, **USER}
    return idp.sign({**claims, "nonce": "n-1", **extra}, key)


def test_unknown_key_ids_refetch_the_keys_once_per_interval() -> None:
    now = [time.time()]
    checker = IdTokens(clock=lambda: now[0])

    async def verify(token: str, config: dict[str, Any]) -> dict[str, Any]:
        async with httpx.AsyncClient() as http:
            return await checker.verify(
                token, config=config, client_id=CLIENT_ID, nonce="n-1", http=http
            )

    stranger = RSAKey.generate_key(2048, {"kid": "nobody's", "alg": "RS256"})
    with serve_provider() as idp:
        config = idp.metadata()
        assert asyncio.run(verify(_id_token(idp), config))["sub"] == USER["sub"]
        assert checker.fetches == 1
        for _ in range(3):  # made-up key ids: one refetch, then none until the interval ends
            with pytest.raises(BadIdToken):
                asyncio.run(verify(_id_token(idp, stranger), config))
        assert checker.fetches == 2
        now[0] += checker.refresh_interval + 1
        idp.rotate()
        assert asyncio.run(verify(_id_token(idp), config))["sub"] == USER["sub"]
        assert checker.fetches == 3
        # Entra's multi-tenant issuer names the tenant in the token's tid.
        template = {**config, "issuer": idp.issuer + "/{tenantid}/v2.0"}
        tenant = _id_token(idp, iss=idp.issuer + "/t-1/v2.0", tid="t-1")
        assert asyncio.run(verify(tenant, template))["tid"] == "t-1"
        other = _id_token(idp, iss=idp.issuer + "/t-1/v2.0", tid="t-2")
        with pytest.raises(BadIdToken):
            asyncio.run(verify(other, template))
