"""The proxy's bounds on what strangers leave in its store: registrations per window
(429, an OAuth error), sign-ins begun per ten minutes (``temporarily_unavailable``:
shown, or at the client's redirect URI once the user allowed the client), and
registrations no sign-in completed, forgotten after a day while a used one is kept.
The proxy is driven in process, through its endpoints."""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.parse
from typing import Any

import httpx

from snodo.auth import OAuthProxy, ProxyLimits
from snodo.auth.protected import Answer, EndpointRequest
from snodo.auth.proxy_grants import s256
from snodo.auth.proxy_store import MemoryProxyStore, digest
from tests.auth_proxy.site import proxied
from tests.support.idp import serve_provider

BASE = "https://mcp.example"
REDIRECT = "http://127.0.0.1:9/callback"
DAY = 86400.0


async def _identity(token: str, http: Any) -> dict[str, Any]:
    return {"sub": "never asked"}


def proxy(store: MemoryProxyStore, **limits: Any) -> OAuthProxy:
    return OAuthProxy(
        authorize_url="https://provider.example/authorize",
        token_url="https://provider.example/token",
        client_id="mcp-server",
        client_secret="provider secret",
        base_url=BASE,
        verify=_identity,
        secret=b"a secret of thirty-two bytes ...",
        store=store,
        limits=ProxyLimits(**limits),
    )


def call(server: OAuthProxy, method: str, path: str, query: str = "", **form: str) -> Answer:
    body, headers = b"", {}
    if method == "POST":
        body = urllib.parse.urlencode(form).encode()
        headers = {"content-type": "application/x-www-form-urlencoded"}
    request = EndpointRequest(method, path, query, headers, body)
    return asyncio.run(server.endpoint(request))


def register(server: OAuthProxy, address: str | None = None) -> Answer:
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
    request = EndpointRequest("POST", "/register", "", {}, json.dumps(body).encode(), address)
    return asyncio.run(server.endpoint(request))


def authorize(
    server: OAuthProxy, client_id: str, address: str | None = None, allowed: bool = False
) -> Answer:
    """``/authorize`` for ``client_id``; ``allowed``: from a browser whose user allowed it."""
    headers = {"cookie": "snodo_consent=" + server.signer.dump("consent", [client_id])}
    query = urllib.parse.urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": s256(secrets.token_urlsafe(48)),
            "code_challenge_method": "S256",
            "state": "st",
        }
    )
    request = EndpointRequest("GET", "/authorize", query, headers if allowed else {}, b"", address)
    return asyncio.run(server.endpoint(request))


def location(answer: Answer) -> dict[str, str]:
    assert answer.status == 302, answer
    url = dict(answer.headers)[b"location"].decode()
    assert url.startswith(REDIRECT)
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def test_registrations_beyond_the_windows_bound_are_429() -> None:
    server = proxy(MemoryProxyStore(), max_registrations=3)
    assert [register(server, f"10.0.0.{n}").status for n in range(3)] == [201, 201, 201]
    refused = register(server, "10.0.0.9")
    assert refused.status == 429
    document = json.loads(refused.body)
    assert document["error"] == "temporarily_unavailable" and document["error_description"]
    assert sum(k.startswith("client:") for k in server.store._values) == 3  # type: ignore[attr-defined]


def test_one_address_has_a_bound_of_its_own() -> None:
    server = proxy(MemoryProxyStore(), max_registrations=5, max_registrations_per_address=2)
    assert [register(server, "10.0.0.1").status for _ in range(4)] == [201, 201, 429, 429]
    # Its refused attempts spent nothing of everyone's bound.
    assert [register(server, "10.0.0.2").status for _ in range(2)] == [201, 201]
    assert register(server, "10.0.0.3").status == 201
    assert register(server, "10.0.0.4").status == 429  # five made: the server's bound
    server = proxy(MemoryProxyStore(), max_sign_ins_per_address=2)
    client = json.loads(register(server).body)["client_id"]
    assert [authorize(server, client, "10.0.0.1").status for _ in range(2)] == [200, 200]
    refused = authorize(server, client, "10.0.0.1")
    assert refused.status == 429
    assert json.loads(refused.body)["error"] == "temporarily_unavailable"
    assert authorize(server, client, "10.0.0.2").status == 200


def test_the_server_counts_registrations_by_the_clients_address() -> None:
    with serve_provider() as idp, proxied(idp, per_address=2) as site:
        body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"}
        answers = [httpx.post(site.address + "/register", json=body) for _ in range(3)]
        assert [a.status_code for a in answers] == [201, 201, 429]
        assert answers[2].json()["error"] == "temporarily_unavailable"


def test_sign_ins_beyond_the_bound_are_temporarily_unavailable() -> None:
    server = proxy(MemoryProxyStore(), max_sign_ins=2)
    client = json.loads(register(server).body)["client_id"]
    assert [authorize(server, client).status for _ in range(2)] == [200, 200]  # consent pages
    # Shown to a browser whose user never allowed the client, sent back to one who did.
    shown = authorize(server, client)
    assert shown.status == 429 and b"location" not in dict(shown.headers)
    answer = location(authorize(server, client, allowed=True))
    assert answer["error"] == "temporarily_unavailable" and answer["state"] == "st"
    assert sum(k.startswith("sign-in:") for k in server.store._values) == 2  # type: ignore[attr-defined]


def test_a_registration_no_sign_in_completed_is_forgotten_after_a_day() -> None:
    now = [0.0]
    server = proxy(MemoryProxyStore(clock=lambda: now[0]))
    client = json.loads(register(server).body)["client_id"]
    now[0] += DAY - 60
    assert authorize(server, client).status == 200
    now[0] += 120
    refused = authorize(server, client)
    assert refused.status == 400 and json.loads(refused.body)["error"] == "invalid_client"


def test_a_registration_that_signed_someone_in_is_kept() -> None:
    now = [0.0]
    server = proxy(MemoryProxyStore(clock=lambda: now[0]))
    client = json.loads(register(server).body)["client_id"]
    # What the provider's callback leaves: a code of the proxy's own for this client.
    verifier, code = secrets.token_urlsafe(48), secrets.token_urlsafe(32)
    record = {
        "client_id": client,
        "redirect_uri": REDIRECT,
        "challenge": s256(verifier),
        "scopes": [],
        "claims": {"sub": "ada"},
        "upstream": {},
    }
    now[0] += DAY - 60
    asyncio.run(server.records.put("code:" + digest(code), record, 300))
    redeemed = call(
        server,
        "POST",
        "/token",
        grant_type="authorization_code",
        code=code,
        client_id=client,
        redirect_uri=REDIRECT,
        code_verifier=verifier,
    )
    assert redeemed.status == 200, redeemed.body
    now[0] += 2 * DAY
    assert authorize(server, client).status == 200
