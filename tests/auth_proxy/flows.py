"""A client of the proxy spoken to over plain HTTP, step by step, so that each step can
be done wrong: registration, the authorization request, the token endpoint, MCP calls."""

from __future__ import annotations

import asyncio
import re
import secrets
import urllib.parse
from typing import Any

import httpx

from snodo.core.http_headers import request_headers
from tests.auth_proxy.site import Site
from tests.support.idp import TestUser, s256
from tests.support.wire import VERSION, request

REDIRECT = "http://127.0.0.1:9/callback"
"""The MCP client's redirect URI: never requested, the user agent stops at it."""


def register(site: Site, method: str = "none", uris: tuple[str, ...] = (REDIRECT,)) -> Any:
    answer = httpx.post(
        site.address + "/register",
        json={"redirect_uris": list(uris), "token_endpoint_auth_method": method},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()


def verifier() -> str:
    return secrets.token_urlsafe(48)


def authorize_url(site: Site, client_id: str, code_verifier: str, **extra: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": s256(code_verifier),
        "code_challenge_method": "S256",
        "state": "st-1",
        "resource": site.mcp,
        **extra,
    }
    return site.address + "/authorize?" + urllib.parse.urlencode(params)


def allow(site: Site, browser: httpx.Client, client_id: str) -> None:
    """The person at ``browser`` allows ``client_id`` on the consent page (remembered
    in that browser from then on)."""
    page = browser.get(authorize_url(site, client_id, verifier()))
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r'name="(txn|csrf)" value="([^"]+)"', page.text))
    allowed = browser.post(site.base + "/consent", data={**fields, "decision": "allow"})
    assert allowed.status_code == 302 and allowed.headers["location"].startswith(site.idp.url)


def back(url: str) -> dict[str, str]:
    """The parameters the client's redirect URI was sent back with."""
    assert url.startswith(REDIRECT), url
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def sign_in(site: Site, client_id: str, code_verifier: str, **extra: str) -> dict[str, str]:
    """A person approves; the parameters of the redirect back."""
    url = authorize_url(site, client_id, code_verifier, **extra)
    return back(asyncio.run(TestUser().walk(url, stop_at=REDIRECT)))


def token(site: Site, auth: tuple[str, str] | None = None, **form: str) -> httpx.Response:
    return httpx.post(site.address + "/token", data=form, auth=auth or httpx.USE_CLIENT_DEFAULT)


def tokens(site: Site, client_id: str) -> dict[str, Any]:
    """A whole sign-in of a public client: its tokens."""
    code_verifier = verifier()
    code = sign_in(site, client_id, code_verifier)["code"]
    answer = token(
        site,
        grant_type="authorization_code",
        code=code,
        client_id=client_id,
        redirect_uri=REDIRECT,
        code_verifier=code_verifier,
        resource=site.mcp,
    )
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def call_me(site: Site, access_token: str) -> httpx.Response:
    message = request("tools/call", {"name": "me", "arguments": {}})
    headers = {"content-type": "application/json", "accept": "application/json"}
    headers |= request_headers(message["method"], message["params"], VERSION)
    headers["authorization"] = f"Bearer {access_token}"
    return httpx.post(site.address + "/mcp", json=message, headers=headers)


def error(answer: httpx.Response, status: int = 400) -> str:
    """The OAuth error of a refusal, checked to be one (status, JSON, a description)."""
    assert answer.status_code == status, answer.text
    document = answer.json()
    assert set(document) == {"error", "error_description"} and document["error_description"]
    assert answer.headers["cache-control"] == "no-store"
    code: str = document["error"]
    return code
