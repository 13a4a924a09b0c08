"""Identity assertion grants (ID-JAG, ext-auth's enterprise-managed authorization) at
two OAuth proxies: FastMCP 4.2.3's ``OAuthProxy(identity_assertion=...)`` (its own
interpreter, tests/auth_proxy/fastmcp_id_jag_server.py) and snodo's
(tests/auth_proxy/id_jag_server.py), both trusting the loopback provider and both
with the same public issuer and resource, so the very same grant suits each.

Both mint a token from it that their MCP endpoint takes for the grant's user; both
refuse it presented again (its ``jti``), and a grant whose ``typ`` is not
``oauth-id-jag+jwt``. snodo's proxy refuses the rest of what the extension asks to
check, and spends a grant across the workers sharing its store.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.client import Client
from tests.support.fastmcp import fastmcp_python
from tests.support.idp import USER, Provider, serve_provider
from tests.support.processes import Serving, serving, snodo_run

BASE = "https://mcp.example.test"
"""The public issuer of both proxies (their ``base_url``), whatever port they use."""
RESOURCE = BASE + "/mcp"
CLIENT = "enterprise-client"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
FASTMCP = Path(__file__).with_name("fastmcp_id_jag_server.py")


@dataclass
class Proxies:
    idp: Provider
    snodo: Serving
    fastmcp: Serving
    snodo_twin: Serving
    """A second snodo worker sharing the first's store."""


def snodo_server(idp: Provider, store: str) -> Any:
    def command(port: int) -> list[str]:
        env = [f"TEST_IDP={idp.url}", f"TEST_BASE={BASE}", f"TEST_CLIENT={CLIENT}"]
        target = "tests/auth_proxy/id_jag_server.py:server"
        return ["env", *env, f"TEST_STORE={store}", *snodo_run(target, "http", "--port", str(port))]

    return serving(command)


@pytest.fixture(scope="module")
def proxies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxies]:
    store = str(tmp_path_factory.mktemp("id-jag") / "proxy.db")
    with ExitStack() as stack:
        idp = stack.enter_context(serve_provider())
        first = stack.enter_context(snodo_server(idp, store))
        twin = stack.enter_context(snodo_server(idp, store))

        def fastmcp(port: int) -> list[str]:
            return [str(fastmcp_python()), str(FASTMCP), idp.url, BASE, CLIENT, str(port)]

        yield Proxies(idp, first, stack.enter_context(serving(fastmcp)), twin)


def present(server: Serving, grant: str, **extra: str) -> httpx.Response:
    """The jwt-bearer grant at ``server``'s token endpoint, as the public client."""
    form = {"grant_type": JWT_BEARER, "assertion": grant, "client_id": CLIENT, **extra}
    return httpx.post(server.base + "/token", data=form, timeout=30)


def refused(answer: httpx.Response) -> str:
    assert answer.status_code in (400, 401), answer.text
    error: str = answer.json()["error"]
    return error


class Presented(httpx.Auth):
    """A token, as is, on every request."""

    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Iterator[httpx.Request]:
        request.headers["authorization"] = f"Bearer {self.token}"
        yield request


def whoami(server: Serving, token: str) -> str:
    async def scenario() -> str:
        async with Client.http(server.base + "/mcp", auth=Presented(token)) as client:
            result = await client.call_tool("whoami", {})
            return " ".join(c.text for c in result.content if hasattr(c, "text"))

    return asyncio.run(asyncio.wait_for(scenario(), 60))


def test_the_same_grant_mints_a_token_at_both_and_is_refused_twice_at_both(
    proxies: Proxies,
) -> None:
    grant = proxies.idp.id_jag(CLIENT, BASE, RESOURCE, scope="notes:read")
    for server in (proxies.snodo, proxies.fastmcp):
        answer = present(server, grant)
        assert answer.status_code == 200, answer.text
        tokens = answer.json()
        assert tokens["token_type"] == "Bearer" and "refresh_token" not in tokens
        assert tokens["scope"] == "notes:read"
        assert whoami(server, tokens["access_token"]).startswith(USER["sub"])
    for server in (proxies.snodo, proxies.fastmcp):
        assert refused(present(server, grant)) == "invalid_grant"  # its jti, spent


def test_a_grant_of_another_type_is_refused_by_both(proxies: Proxies) -> None:
    for server in (proxies.snodo, proxies.fastmcp):
        plain = proxies.idp.id_jag(CLIENT, BASE, RESOURCE, typ="JWT")
        assert refused(present(server, plain)) == "invalid_grant"
        # The provider's ID token is a JWT of the same issuer, and not a grant either.
        id_token = proxies.idp.id_token(CLIENT)
        assert refused(present(server, id_token)) == "invalid_grant"


def test_snodo_refuses_what_the_extension_asks_it_to_check(proxies: Proxies) -> None:
    idp = proxies.idp
    now = int(time.time())
    wrong = {
        "another audience": idp.id_jag(CLIENT, "https://other.example", RESOURCE),
        "another resource": idp.id_jag(CLIENT, BASE, "https://other.example/mcp"),
        "another client": idp.id_jag("someone-else", BASE, RESOURCE),
        "expired": idp.id_jag(CLIENT, BASE, RESOURCE, iat=now - 400, exp=now - 100),
        "lives too long": idp.id_jag(CLIENT, BASE, RESOURCE, exp=now + 3600),
        "no jti": idp.id_jag(CLIENT, BASE, RESOURCE, jti=None),
        "no subject": idp.id_jag(CLIENT, BASE, RESOURCE, sub=None),
        "no resource": idp.id_jag(CLIENT, BASE, None),
    }
    for why, grant in wrong.items():
        assert refused(present(proxies.snodo, grant)) == "invalid_grant", why
    stranger = Provider()
    stranger.url = "http://127.0.0.1:9"  # an issuer nobody trusts, signing with its own key
    assert refused(present(proxies.snodo, stranger.id_jag(CLIENT, BASE, RESOURCE))) == (
        "invalid_grant"
    )
    # A client the proxy does not know, and a grant asked for another resource.
    grant = idp.id_jag(CLIENT, BASE, RESOURCE)
    unknown = httpx.post(
        proxies.snodo.base + "/token",
        data={"grant_type": JWT_BEARER, "assertion": grant, "client_id": "nobody"},
    )
    assert (unknown.status_code, unknown.json()["error"]) == (401, "invalid_client")
    assert refused(present(proxies.snodo, grant, resource="https://x.example")) == (
        "invalid_target"
    )
    # Refused for another client, the grant was not spent: its own client still can.
    misused = idp.id_jag(CLIENT, BASE, RESOURCE)
    assert present(proxies.snodo, misused, client_id="nobody").status_code == 401
    assert present(proxies.snodo, misused).status_code == 200


def test_a_grant_spent_on_one_snodo_worker_is_refused_on_the_other(proxies: Proxies) -> None:
    grant = proxies.idp.id_jag(CLIENT, BASE, RESOURCE)
    assert present(proxies.snodo_twin, grant).status_code == 200
    assert refused(present(proxies.snodo, grant)) == "invalid_grant"


def test_snodo_advertises_the_grant_and_narrows_scopes_to_the_grant(proxies: Proxies) -> None:
    metadata = httpx.get(proxies.snodo.base + "/.well-known/oauth-authorization-server").json()
    assert JWT_BEARER in metadata["grant_types_supported"]
    idp = proxies.idp
    granted = present(proxies.snodo, idp.id_jag(CLIENT, BASE, RESOURCE, scope="notes:read"))
    asked = present(
        proxies.snodo,
        idp.id_jag(CLIENT, BASE, RESOURCE, scope="notes:read"),
        scope="notes:read notes:write",
    )
    unscoped = present(proxies.snodo, idp.id_jag(CLIENT, BASE, RESOURCE), scope="notes:write")
    assert granted.json()["scope"] == "notes:read"
    assert asked.json()["scope"] == "notes:read"  # the request cannot widen the grant
    assert unscoped.json()["scope"] == "notes:write"  # no scope in the grant: asked of offered
    who = whoami(proxies.snodo, granted.json()["access_token"])
    assert who == f"{USER['sub']} {USER['email']} notes:read"
