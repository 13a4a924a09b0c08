"""DPoP end to end: snodo's client signs in with a DPoP key through a snodo server behind
the OAuth proxy, in front of the loopback provider, two workers sharing the proxy's
store (SQLite for one host, Redis for many). The token is bound to the client's key;
a proof replayed, a token without its proof or under the Bearer scheme, and a proof of
another key are refused on either worker; the bound refresh token needs the same key."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.client import Client
from snodo.core.http_headers import request_headers
from snodo.oauth import DPoPKey, MemoryTokenStorage, OAuth, Tokens
from tests.auth_proxy.site import Site
from tests.auth_proxy.test_workers import two_workers
from tests.support.idp import USER, TestUser
from tests.support.wire import VERSION, request


@pytest.fixture(params=["sqlite", "redis"])
def workers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Site, Site]]:
    if request.param == "sqlite":
        store = str(tmp_path / "proxy.db")
    else:
        store = request.getfixturevalue("redis_url")
    yield from two_workers(store)


def claims_of(token: str) -> dict[str, Any]:
    """A JWT's claims, unverified (the test reads what the proxy put there)."""
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * 4))
    return decoded


def call_me(site: Site, authorization: str | None, proof: str | None = None) -> httpx.Response:
    message = request("tools/call", {"name": "me", "arguments": {}})
    headers = {"content-type": "application/json", "accept": "application/json"}
    headers |= request_headers(message["method"], message["params"], VERSION)
    if authorization is not None:
        headers["authorization"] = authorization
    if proof is not None:
        headers["dpop"] = proof
    return httpx.post(site.address + "/mcp", json=message, headers=headers)


def refusal(answer: httpx.Response) -> str:
    """The DPoP challenge's error of a 401."""
    assert answer.status_code == 401, answer.text
    challenge = answer.headers["www-authenticate"]
    assert challenge.startswith("DPoP ") or challenge.startswith("Bearer "), challenge
    error: str = answer.json()["error"]
    assert f'error="{error}"' in challenge
    return error


def sign_in(site: Site, oauth: OAuth) -> str:
    async def scenario() -> str:
        async with Client.http(site.mcp, auth=oauth) as client:
            result = await client.call_tool("me", {})
            return " ".join(c.text for c in result.content if hasattr(c, "text"))

    return asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_dpop_sign_in_binds_the_token_and_replays_are_refused_on_both_workers(
    workers: tuple[Site, Site],
) -> None:
    first, second = workers
    storage = MemoryTokenStorage()
    key = DPoPKey()
    oauth = OAuth(user_agent=TestUser(), client_name="dpop", storage=storage, dpop=key)
    assert sign_in(first, oauth).startswith(f"{USER['sub']} {USER['email']}")
    tokens = storage.tokens
    assert isinstance(tokens, Tokens) and tokens.token_type == "DPoP"
    assert tokens.dpop_key is not None and DPoPKey.from_jwk(tokens.dpop_key).thumbprint == (
        key.thumbprint
    )
    access = tokens.access_token
    assert claims_of(access)["cnf"] == {"jkt": key.thumbprint}

    # The same client, the same token, the other worker: fresh proofs, accepted.
    assert sign_in(second, oauth).startswith(USER["sub"])

    dpop = f"DPoP {access}"
    proof = key.proof("POST", first.mcp, access_token=access)
    assert call_me(first, dpop, proof).status_code == 200
    assert refusal(call_me(first, dpop, proof)) == "invalid_dpop_proof"  # replayed
    assert refusal(call_me(second, dpop, proof)) == "invalid_dpop_proof"  # on the other
    fresh = key.proof("POST", first.mcp, access_token=access)
    assert call_me(second, dpop, fresh).status_code == 200
    for worker in (first, second):
        assert refusal(call_me(worker, dpop)) == "invalid_dpop_proof"  # no proof
        assert refusal(call_me(worker, f"Bearer {access}")) == "invalid_token"  # as bearer
        stolen = DPoPKey().proof("POST", first.mcp, access_token=access)
        assert refusal(call_me(worker, dpop, stolen)) == "invalid_dpop_proof"  # not its key
        other_token = key.proof("POST", first.mcp, access_token="another-token")
        assert refusal(call_me(worker, dpop, other_token)) == "invalid_dpop_proof"  # ath


def test_the_bound_refresh_token_needs_a_proof_of_the_same_key(
    workers: tuple[Site, Site],
) -> None:
    first, second = workers
    storage = MemoryTokenStorage()
    key = DPoPKey()
    sign_in(first, OAuth(user_agent=TestUser(), storage=storage, dpop=key))
    tokens = storage.tokens
    assert tokens is not None and tokens.refresh_token
    client = storage.clients[first.base].client_id
    endpoint = first.base + "/token"
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    form["client_id"] = client

    def refresh(worker: Site, proof: str | None) -> httpx.Response:
        headers = {} if proof is None else {"dpop": proof}
        return httpx.post(worker.address + "/token", data=form, headers=headers)

    # Refused without a proof and with another key's; neither spends the token.
    for worker in (first, second):
        assert refresh(worker, None).json()["error"] == "invalid_grant"
        stranger = DPoPKey().proof("POST", endpoint)
        assert refresh(worker, stranger).json()["error"] == "invalid_grant"
    proof = key.proof("POST", endpoint)
    renewed = refresh(second, proof)
    assert renewed.status_code == 200, renewed.text
    assert renewed.json()["token_type"] == "DPoP"
    assert claims_of(renewed.json()["access_token"])["cnf"] == {"jkt": key.thumbprint}
    # That proof again, with the new refresh token, on the first worker: replayed.
    form["refresh_token"] = renewed.json()["refresh_token"]
    again = refresh(first, proof)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_dpop_proof")
    assert refresh(first, key.proof("POST", endpoint)).status_code == 200


def test_a_bearer_client_still_signs_in_and_gets_a_bearer_token(site: Site) -> None:
    storage = MemoryTokenStorage()
    assert sign_in(site, OAuth(user_agent=TestUser(), storage=storage)).startswith(USER["sub"])
    assert storage.tokens is not None and storage.tokens.token_type == "Bearer"
    assert "cnf" not in claims_of(storage.tokens.access_token)
    metadata = httpx.get(site.address + "/.well-known/oauth-authorization-server").json()
    assert "ES256" in metadata["dpop_signing_alg_values_supported"]
    resource = httpx.get(site.address + "/.well-known/oauth-protected-resource/mcp").json()
    assert "ES256" in resource["dpop_signing_alg_values_supported"]
    unsigned = call_me(site, None)
    assert unsigned.status_code == 401
    bearer, dpop = unsigned.headers["www-authenticate"].split(", DPoP ")
    assert bearer.startswith('Bearer resource_metadata="')
    assert dpop.startswith('resource_metadata="') and 'algs="ES256 ' in dpop
