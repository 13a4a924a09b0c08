"""Each thing the proxy refuses, refused with an OAuth error and never a 500: codes,
PKCE, redirect URIs, resources, clients, forged and foreign tokens, spent refresh
tokens, revoked grants, forms not from the consent page, links from another browser."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time

import httpx

from snodo.auth.proxy_store import MemoryProxyStore
from snodo.auth.proxy_tokens import TokenMinter
from tests.auth_proxy.flows import (
    REDIRECT,
    allow,
    authorize_url,
    back,
    call_me,
    error,
    register,
    sign_in,
    token,
    tokens,
    verifier,
)
from tests.auth_proxy.servers import SECRET
from tests.auth_proxy.site import Site
from tests.support.idp import TestUser


def redeem(
    site: Site, client_id: str, code: str, code_verifier: str, **extra: str
) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_verifier": code_verifier,
        **extra,
    }
    return token(site, **form)


def test_the_metadata_points_to_the_proxy(site: Site) -> None:
    resource = httpx.get(site.base + "/.well-known/oauth-protected-resource/mcp").json()
    assert resource["authorization_servers"] == [site.base]
    server = httpx.get(site.base + "/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == site.base
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["registration_endpoint"] == site.base + "/register"
    assert server["client_id_metadata_document_supported"] is True


def test_a_code_is_redeemed_once(site: Site) -> None:
    client = register(site)["client_id"]
    code_verifier = verifier()
    answer = sign_in(site, client, code_verifier)
    assert answer["state"] == "st-1" and answer["iss"] == site.base
    assert redeem(site, client, answer["code"], code_verifier).status_code == 200
    assert error(redeem(site, client, answer["code"], code_verifier)) == "invalid_grant"


def test_a_wrong_pkce_verifier_is_refused_and_spends_the_code(site: Site) -> None:
    client = register(site)["client_id"]
    code_verifier = verifier()
    code = sign_in(site, client, code_verifier)["code"]
    assert error(redeem(site, client, code, verifier())) == "invalid_grant"
    assert error(redeem(site, client, code, code_verifier)) == "invalid_grant"


def test_the_code_is_bound_to_its_client_and_redirect_uri(site: Site) -> None:
    client, other = register(site)["client_id"], register(site)["client_id"]
    code_verifier = verifier()
    code = sign_in(site, client, code_verifier)["code"]
    assert error(redeem(site, other, code, code_verifier)) == "invalid_grant"
    code = sign_in(site, client, code_verifier)["code"]
    wrong = redeem(site, client, code, code_verifier, redirect_uri=REDIRECT + "/x")
    assert error(wrong) == "invalid_grant"


def test_an_unregistered_redirect_uri_is_never_redirected_to(site: Site) -> None:
    client = register(site)["client_id"]
    for uri in (REDIRECT + "/other", "http://127.0.0.1:9/callback/", "https://evil.example/cb"):
        answer = httpx.get(authorize_url(site, client, verifier(), redirect_uri=uri))
        assert error(answer) == "invalid_request"
        assert "location" not in answer.headers
    unknown = httpx.get(authorize_url(site, "no-such-client", verifier()))
    assert error(unknown) == "invalid_client"


def test_registration_refuses_redirect_uris_a_browser_would_run(site: Site) -> None:
    for uri in ("javascript:alert(1)", "http://evil.example/cb", "https://x.example/cb#frag"):
        answer = httpx.post(site.base + "/register", json={"redirect_uris": [uri]})
        assert error(answer) == "invalid_redirect_uri"
    assert error(httpx.post(site.base + "/register", content=b"[")) == "invalid_client_metadata"


def test_a_registration_is_bounded_in_uris_their_length_and_its_size(site: Site) -> None:
    def registered(document: dict[str, object]) -> httpx.Response:
        return httpx.post(site.address + "/register", json=document, timeout=30)

    eleven = [f"{REDIRECT}/{n}" for n in range(11)]
    assert error(registered({"redirect_uris": eleven})) == "invalid_redirect_uri"
    long = REDIRECT + "/" + "a" * 2000
    assert error(registered({"redirect_uris": [long]})) == "invalid_redirect_uri"
    # 1800 URIs of 2000 characters, 3.6 MB, once kept whole; a name padded past the size.
    huge = [f"{REDIRECT}/{n:04d}/" + "a" * 1970 for n in range(1800)]
    assert error(registered({"redirect_uris": huge})) == "invalid_client_metadata"
    padded = {"redirect_uris": [REDIRECT], "client_name": "x" * 20_000}
    assert error(registered(padded)) == "invalid_client_metadata"
    # The most one may be: ten long URIs, within 16 KiB.
    most = [f"{REDIRECT}/{n}/" + "a" * 1400 for n in range(10)]
    answer = registered({"redirect_uris": most, "token_endpoint_auth_method": "none"})
    assert answer.status_code == 201 and answer.json()["redirect_uris"] == most


MALFORMED = {
    "invalid_request": {"code_challenge_method": "plain"},
    "invalid_target": {"resource": "https://other.example/mcp"},
    "unsupported_response_type": {"response_type": "token"},
}


def test_pkce_s256_and_this_resource_are_required(site: Site) -> None:
    client = register(site)["client_id"]
    with httpx.Client(timeout=10) as browser:
        allow(site, browser, client)
        # The user allowed this client here: its errors go back to it, with its state.
        for expected, extra in MALFORMED.items():
            answer = browser.get(authorize_url(site, client, verifier(), **extra))
            assert answer.status_code == 302
            found = back(answer.headers["location"])
            assert found["error"] == expected and found["state"] == "st-1", found
        missing = authorize_url(site, client, verifier()).replace("code_challenge=", "x=")
        assert back(browser.get(missing).headers["location"])["error"] == "invalid_request"


def test_a_strangers_malformed_link_is_shown_its_error_never_redirected(site: Site) -> None:
    """Anyone may register a client whose redirect URI is their own page: a malformed
    request for it, opened by a browser whose user never allowed it, stays here."""
    landing = "https://evil.example/landing"
    client = register(site, uris=(landing,))["client_id"]
    for expected, extra in MALFORMED.items():
        answer = httpx.get(authorize_url(site, client, verifier(), redirect_uri=landing, **extra))
        assert error(answer) == expected
        assert "location" not in answer.headers
    # A well-formed one is no different: the consent page, which names where it leads.
    page = httpx.get(authorize_url(site, client, verifier(), redirect_uri=landing))
    assert page.status_code == 200 and landing in page.text


def test_clients_prove_themselves_at_the_token_endpoint(site: Site) -> None:
    confidential = register(site, "client_secret_basic")
    client, secret = confidential["client_id"], confidential["client_secret"]
    code_verifier = verifier()
    code = sign_in(site, client, code_verifier)["code"]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT}
    form["code_verifier"] = code_verifier
    assert error(token(site, (client, "wrong"), **form), 401) == "invalid_client"
    assert error(token(site, ("nobody", secret), **form), 401) == "invalid_client"
    assert error(token(site, client_id=client, **form), 401) == "invalid_client"
    # The code was not spent by requests whose client was not established.
    assert token(site, (client, secret), **form).status_code == 200
    assert error(token(site, (client, secret), grant_type="password")) == "unsupported_grant_type"


def test_the_proxys_token_is_accepted_and_forged_or_foreign_ones_are_not(site: Site) -> None:
    client = register(site)["client_id"]
    access = tokens(site, client)["access_token"]
    assert call_me(site, access).status_code == 200
    head, payload, signature = access.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["sub"] = "someone-else"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    family_alive = MemoryProxyStore()

    def minted(resource: str, clock: float) -> str:
        minter = TokenMinter(SECRET, site.base, resource, family_alive, clock=lambda: clock)
        return minter.mint({"sub": "ada"}, client, ["notes:read"], claims["fam"])[0]

    refused = {
        "tampered": f"{head}.{forged}.{signature}",
        "expired": minted(site.mcp, time.time() - 3600),
        "another audience": minted("http://127.0.0.1:9/mcp", time.time()),
        "the provider's": site.idp.mint_access_token(audience=site.mcp),
        "the provider's for its client": site.idp.mint_access_token(),
    }
    for what, bad in refused.items():
        answer = call_me(site, bad)
        assert answer.status_code == 401, what
        assert answer.json()["error"] == "invalid_token", what
    # The same key, audience and time are accepted: the refusals above are for their flaw.
    assert call_me(site, minted(site.mcp, time.time())).status_code == 200


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_grant(site: Site) -> None:
    client = register(site)["client_id"]
    first = tokens(site, client)
    refreshed = token(
        site, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client
    )
    assert refreshed.status_code == 200, refreshed.text
    second = refreshed.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert call_me(site, second["access_token"]).status_code == 200
    again = token(
        site, grant_type="refresh_token", refresh_token=first["refresh_token"], client_id=client
    )
    assert error(again) == "invalid_grant"
    # The whole family is gone: the newest refresh token and every access token.
    for access in (first["access_token"], second["access_token"]):
        assert call_me(site, access).status_code == 401
    latest = token(
        site, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=client
    )
    assert error(latest) == "invalid_grant"


def test_revocation_ends_the_grant(site: Site) -> None:
    client = register(site)["client_id"]
    for kind in ("access_token", "refresh_token"):
        held = tokens(site, client)
        answer = httpx.post(site.base + "/revoke", data={"token": held[kind], "client_id": client})
        assert answer.status_code == 200
        assert call_me(site, held["access_token"]).status_code == 401, kind
    unknown = httpx.post(site.base + "/revoke", data={"token": "nonsense", "client_id": client})
    assert unknown.status_code == 200  # RFC 7009 section 2.2


def test_consent_is_asked_per_client_and_remembered_per_browser(site: Site) -> None:
    client, other = register(site)["client_id"], register(site)["client_id"]
    with httpx.Client(timeout=10) as browser:
        page = browser.get(authorize_url(site, client, verifier()))
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert page.headers["x-frame-options"] == "DENY"
        fields = dict(
            (name, value)
            for name, value in re.findall(r'name="(txn|csrf)" value="([^"]+)"', page.text)
        )
        # Another site's form carries no CSRF cookie of this browser: refused.
        stranger = httpx.post(site.base + "/consent", data={**fields, "decision": "allow"})
        assert error(stranger) == "invalid_request"
        tampered = browser.post(
            site.base + "/consent", data={**fields, "csrf": "x", "decision": "allow"}
        )
        assert error(tampered) == "invalid_request"
        allowed = browser.post(site.base + "/consent", data={**fields, "decision": "allow"})
        assert allowed.status_code == 302
        assert allowed.headers["location"].startswith(site.idp.url + "/authorize?")
        # Remembered for this client in this browser: straight on to the provider.
        again = browser.get(authorize_url(site, client, verifier()))
        assert again.status_code == 302
        assert again.headers["location"].startswith(site.idp.url + "/authorize?")
        # Not for another client, nor in another browser.
        assert browser.get(authorize_url(site, other, verifier())).status_code == 200
    assert httpx.get(authorize_url(site, client, verifier())).status_code == 200


def test_a_provider_link_followed_in_another_browser_leads_nowhere(site: Site) -> None:
    client = register(site)["client_id"]
    with httpx.Client(timeout=10) as victim:
        # Someone consents in their own browser, then hands the provider's link on.
        attacker = httpx.Client(timeout=10)
        page = attacker.get(authorize_url(site, client, verifier()))
        fields = dict(re.findall(r'name="(txn|csrf)" value="([^"]+)"', page.text))
        link = attacker.post(site.base + "/consent", data={**fields, "decision": "allow"})
        attacker.close()
        provider_url = link.headers["location"]
        back_here = asyncio.run(TestUser().walk(provider_url, stop_at=site.base + "/auth/callback"))
        answer = victim.get(back_here)
        assert error(answer) == "access_denied"
        assert "location" not in answer.headers


def test_a_callback_opened_in_another_browser_spends_nothing(site: Site) -> None:
    """The provider's answer, opened by someone else first, is refused there and still
    completes the sign-in in the browser that began it."""
    client = register(site)["client_id"]
    code_verifier = verifier()
    with httpx.Client(timeout=10) as user, httpx.Client(timeout=10) as other:
        page = user.get(authorize_url(site, client, code_verifier))
        fields = dict(re.findall(r'name="(txn|csrf)" value="([^"]+)"', page.text))
        link = user.post(site.base + "/consent", data={**fields, "decision": "allow"})
        provider_url = link.headers["location"]
        callback = asyncio.run(TestUser().walk(provider_url, stop_at=site.base + "/auth/callback"))
        assert error(other.get(callback)) == "access_denied"
        finished = user.get(callback)
        assert finished.status_code == 302, finished.text
        code = back(finished.headers["location"])["code"]
    assert redeem(site, client, code, code_verifier).status_code == 200


def test_malformed_requests_are_oauth_errors_never_500(site: Site) -> None:
    base = site.address
    form = {"content-type": "application/x-www-form-urlencoded"}
    cases = [
        httpx.get(base + "/token"),
        httpx.post(base + "/token", json={"grant_type": "authorization_code"}),
        httpx.post(base + "/token", content=b"grant_type=a&grant_type=b", headers=form),
        httpx.post(base + "/token", content=b"\xff\xfe", headers=form),
        httpx.post(base + "/revoke", content=b"token=x", headers=form),
        httpx.get(base + "/authorize?client_id=a&client_id=b"),
        httpx.get(base + "/authorize"),
        httpx.get(base + "/auth/callback?state=nothing-of-ours&code=x"),
        httpx.get(base + "/auth/callback"),
        httpx.get(base + "/consent"),
        httpx.post(base + "/consent", content=b"txn=x", headers=form),
        httpx.get(base + "/register"),
        httpx.post(
            base + "/register", json={"redirect_uris": [REDIRECT], "response_types": ["token"]}
        ),
    ]
    for answer in cases:
        assert 400 <= answer.status_code < 500, (answer.request.url, answer.status_code)
        assert answer.json()["error"] and answer.json()["error_description"]


def test_the_endpoints_answer_only_allowed_hosts_and_bounded_bodies(site: Site) -> None:
    elsewhere = httpx.get(
        site.address + "/.well-known/oauth-authorization-server", headers={"host": "evil.example"}
    )
    assert elsewhere.status_code == 421
    huge = httpx.post(
        site.address + "/token",
        content=b"a" * (4 * 1024 * 1024 + 1),
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert huge.status_code == 413


def test_browser_clients_may_call_the_endpoints_they_call_themselves(site: Site) -> None:
    origin = {"origin": "https://inspector.example", "access-control-request-method": "POST"}
    for path in ("/token", "/register", "/revoke", "/.well-known/oauth-authorization-server"):
        preflight = httpx.options(site.address + path, headers=origin)
        assert preflight.status_code == 204, path
        assert preflight.headers["access-control-allow-origin"] == "*"
        assert "content-type" in preflight.headers["access-control-allow-headers"]
    refused = httpx.post(site.address + "/token", data={"grant_type": "x"})
    assert refused.headers["access-control-allow-origin"] == "*"
    # The pages a person sees are no script's to read.
    page = httpx.get(site.address + "/authorize")
    assert "access-control-allow-origin" not in page.headers
