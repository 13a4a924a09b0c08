"""The loopback OpenID provider and the test user the sign-in tests rely on.

The provider stands in for a real one, so what it refuses matters as much as what it
grants: a test that passes against a provider that accepts anything proves nothing.
"""

from __future__ import annotations

import asyncio
import secrets
import urllib.parse
from collections.abc import Iterator

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from snodo.oauth import BrowserUserAgent
from tests.support.idp import (
    CLIENT_ID,
    CLIENT_SECRET,
    USER,
    Provider,
    TestUser,
    s256,
    serve_provider,
)
from tests.support.processes import free_port

REDIRECT = "http://127.0.0.1:9/callback"


@pytest.fixture(scope="module")
def idp() -> Iterator[Provider]:
    with serve_provider(Provider()) as provider:
        provider.add_client(redirect_uris=[REDIRECT])
        yield provider


def authorization_url(idp: Provider, challenge: str, **extra: str) -> str:
    query = {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": REDIRECT,
        "scope": "openid email profile",
        "state": "the-state",
        "nonce": "the-nonce",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        **extra,
    }
    return f"{idp.url}/authorize?{urllib.parse.urlencode(query)}"


def sign_in(idp: Provider, user: TestUser, **extra: str) -> tuple[dict[str, str], str]:
    verifier = secrets.token_urlsafe(48)
    back = asyncio.run(user.authorize(authorization_url(idp, s256(verifier), **extra), REDIRECT))
    assert back.startswith(REDIRECT + "?")
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(back).query)), verifier


def redeem(idp: Provider, code: str, verifier: str, **form: str) -> httpx.Response:
    body = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        **form,
    }
    return httpx.post(idp.token_endpoint, data=body, auth=(CLIENT_ID, CLIENT_SECRET))


def test_discovery_has_no_registration_endpoint(idp: Provider) -> None:
    document = httpx.get(idp.config_url).json()
    assert document["issuer"] == idp.url
    assert "registration_endpoint" not in document
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert "private_key_jwt" in document["token_endpoint_auth_methods_supported"]


def test_a_sign_in_yields_tokens_for_the_test_user(idp: Provider) -> None:
    user = TestUser()
    params, verifier = sign_in(idp, user)
    assert params["state"] == "the-state"
    assert params["iss"] == idp.url
    answer = redeem(idp, params["code"], verifier)
    assert answer.status_code == 200, answer.text
    tokens = answer.json()
    keys = KeySet.import_key_set(httpx.get(f"{idp.url}/jwks").json())
    id_token = jwt.decode(tokens["id_token"], keys).claims
    assert (id_token["iss"], id_token["aud"], id_token["nonce"]) == (
        idp.url,
        CLIENT_ID,
        "the-nonce",
    )
    assert {k: id_token[k] for k in USER} == USER
    info = httpx.get(
        f"{idp.url}/userinfo", headers={"authorization": f"Bearer {tokens['access_token']}"}
    )
    assert info.json() == USER
    # the user pressed the sign-in button, not the cancel one
    assert [fields["decision"] for _, fields in user.forms] == ["approve"]


def test_a_code_is_redeemed_once(idp: Provider) -> None:
    params, verifier = sign_in(idp, TestUser())
    assert redeem(idp, params["code"], verifier).status_code == 200
    again = redeem(idp, params["code"], verifier)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


def test_a_wrong_verifier_is_refused(idp: Provider) -> None:
    params, _ = sign_in(idp, TestUser())
    answer = redeem(idp, params["code"], secrets.token_urlsafe(48))
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_grant")


def test_a_wrong_secret_is_refused(idp: Provider) -> None:
    params, verifier = sign_in(idp, TestUser())
    body = {
        "grant_type": "authorization_code",
        "code": params["code"],
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
    }
    answer = httpx.post(idp.token_endpoint, data=body, auth=(CLIENT_ID, "guess"))
    assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client")
    # client_secret_post works where basic does
    posted = httpx.post(
        idp.token_endpoint, data={**body, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    )
    assert posted.status_code == 200, posted.text


def test_refusing_and_a_failed_login_send_access_denied(idp: Provider) -> None:
    params, _ = sign_in(idp, TestUser(approve=False))
    assert params["error"] == "access_denied" and params["state"] == "the-state"
    idp.deny_login = True
    try:
        params, _ = sign_in(idp, TestUser())
    finally:
        idp.deny_login = False
    assert params["error"] == "access_denied"


def test_an_unregistered_redirect_uri_is_shown_not_followed(idp: Provider) -> None:
    url = authorization_url(idp, s256("v" * 43), redirect_uri="http://127.0.0.1:9/elsewhere")
    with pytest.raises(AssertionError, match="400"):
        asyncio.run(TestUser().authorize(url, "http://127.0.0.1:9/elsewhere"))


def test_rotation_signs_with_the_new_key_and_keeps_the_old_published() -> None:
    with serve_provider(Provider(alg="ES256")) as idp:
        before = idp.requests["/jwks"]
        first = jwt.decode(idp.mint_access_token(), KeySet(list(idp.keys)))
        idp.rotate()
        second = jwt.decode(idp.mint_access_token(), KeySet(list(idp.keys)))
        published = [k["kid"] for k in httpx.get(f"{idp.url}/jwks").json()["keys"]]
        assert (first.header["kid"], second.header["kid"]) == ("key-1", "key-2")
        assert published == ["key-2", "key-1"]
        assert idp.requests["/jwks"] == before + 1


def test_the_test_user_is_a_browser_opener(idp: Provider) -> None:
    """As ``BrowserUserAgent(open_page=...)``: it delivers the redirect to the listener."""
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    idp.add_client("opener", CLIENT_SECRET, [redirect])
    url = authorization_url(idp, s256("v" * 43), client_id="opener", redirect_uri=redirect)
    agent = BrowserUserAgent(open_page=TestUser().open, timeout=60)
    back = asyncio.run(agent.authorize(url, redirect))
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(back).query))
    assert params["state"] == "the-state" and params["code"]


def test_client_assertions_are_checked_like_an_authorization_server_does(idp: Provider) -> None:
    """private_key_jwt at the provider: a reused jti, another audience, an expired
    assertion or an unknown key is invalid_client; a good one gets a token."""
    from joserfc.jwk import ECKey

    from snodo.oauth import ClientKey

    key = ECKey.generate_key("P-256", {"kid": "m1"})
    idp.add_client("machine", None, keys=KeySet([key]), grant_types=("client_credentials",))

    def ask(assertion: str) -> httpx.Response:
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        }
        return httpx.post(idp.token_endpoint, data=form)

    signer = ClientKey(key)
    good = signer.assertion("machine", idp.token_endpoint, idp.issuer)
    assert ask(good).status_code == 200
    stranger = ClientKey(ECKey.generate_key("P-256", {"kid": "m1"}))
    refused = {
        "reused": good,
        "elsewhere": signer.assertion("machine", "http://127.0.0.1:9/token", "http://x"),
        "expired": signer.assertion("machine", idp.token_endpoint, idp.issuer, now=1_000_000),
        "unknown key": stranger.assertion("machine", idp.token_endpoint, idp.issuer),
    }
    for what, assertion in refused.items():
        answer = ask(assertion)
        assert (answer.status_code, answer.json()["error"]) == (401, "invalid_client"), what
