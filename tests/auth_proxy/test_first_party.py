"""The proxy's consent policy: a first-party client (listed by the operator) signs its
user in without a consent page; any other client's user is still asked. The server is
the one the runner's authorization-code-grant scenario signs in at
(tests/conformance/authorization_server.py), in front of the loopback provider."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests.auth_proxy.flows import REDIRECT, authorize_url, back, register, verifier
from tests.auth_proxy.site import Site
from tests.conformance.authorization_server import CLIENT_ID
from tests.support.idp import TestUser, serve_provider
from tests.support.processes import serving, snodo_run


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve_provider() as idp:
        sites: list[Site] = []

        def command(port: int) -> list[str]:
            base = f"http://127.0.0.1:{port}"
            sites.append(Site(idp, base, base))
            idp.add_client(redirect_uris=[base + "/auth/callback"])
            env = [f"TEST_IDP={idp.url}", f"TEST_BASE={base}", f"TEST_CALLBACK={REDIRECT}"]
            target = "tests/conformance/authorization_server.py:server"
            return ["env", *env, *snodo_run(target, "http", "--port", str(port))]

        with serving(command):
            yield sites[-1]


def sign_in(site: Site, client_id: str) -> tuple[TestUser, dict[str, str], str]:
    user = TestUser()
    code_verifier = verifier()
    url = authorize_url(site, client_id, code_verifier)
    return user, back(asyncio.run(user.walk(url, stop_at=REDIRECT))), code_verifier


def test_a_first_party_client_is_not_asked_for_consent(site: Site) -> None:
    user, answer, code_verifier = sign_in(site, CLIENT_ID)
    assert answer["state"] == "st-1" and answer["iss"] == site.base
    # The only form the person filled in was the provider's sign-in.
    assert [action.removeprefix(site.idp.url) for action, _ in user.forms] == ["/login"]
    tokens = httpx.post(
        site.address + "/token",
        data={
            "grant_type": "authorization_code",
            "code": answer["code"],
            "client_id": CLIENT_ID,
            "redirect_uri": REDIRECT,
            "code_verifier": code_verifier,
        },
    )
    assert tokens.status_code == 200, tokens.text
    assert tokens.headers["cache-control"] == "no-store"


def test_any_other_client_is_still_asked(site: Site) -> None:
    client = register(site)["client_id"]
    user, answer, _ = sign_in(site, client)
    assert "code" in answer
    assert [action.removeprefix(site.base) for action, _ in user.forms[:1]] == ["/consent"]


def test_a_first_party_client_keeps_its_listed_redirect_uri(site: Site) -> None:
    url = authorize_url(site, CLIENT_ID, verifier()).replace(
        "127.0.0.1%3A9%2Fcallback", "127.0.0.1%3A10%2Fcallback"
    )
    answer = httpx.get(url)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_request"
