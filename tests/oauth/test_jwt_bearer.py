"""The jwt-bearer grant (RFC 7523) from the client: a workload's identity token read
from a file or the environment afresh for each token request, and an enterprise
identity provider's ID-JAG got by token exchange (RFC 8693) with the user's ID token.

The workload tests read the literal token requests of the fake authorization server
of tests/oauth/fakes.py. The enterprise test is whole: the loopback provider of
tests/support/idp.py is the company's identity provider, snodo's OAuth proxy
(tests/auth_proxy/id_jag_server.py) takes its grants, and ``Client.http`` calls a tool
there with ``OAuth(grant="jwt_bearer", assertion=CrossAppAccess(...))``, DPoP-bound too.
The documentation's two programs (docs/examples/oauth_enterprise.py, oauth_workload.py)
run against such servers as they are.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from snodo.client import Client
from snodo.oauth import (
    CrossAppAccess,
    MemoryTokenStorage,
    OAuth,
    OAuthError,
    WorkloadIdentity,
)
from snodo.oauth.jwt_bearer import ID_JAG, ID_TOKEN, JWT_BEARER
from tests.oauth.fakes import AS1, MCP, AuthServer, World
from tests.support.idp import TOKEN_EXCHANGE, USER, Provider, serve_provider
from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run

ENTERPRISE_CLIENT = "enterprise-client"
"""The MCP client's id at the MCP server's authorization server."""
DESK_APP = "desk-app"
"""The same client's registration at the company's identity provider."""
DESK_SECRET = "the desk app's secret at the provider"


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def fake_world() -> tuple[World, AuthServer]:
    server = AuthServer(AS1, auth_methods=["none"], registration=False)
    return World({AS1: server}), server


def grants(server: AuthServer) -> list[dict[str, str]]:
    return [form for form, _ in server.token_requests]


async def call(oauth: OAuth, world: World) -> None:
    """tools/list at the fake MCP server through the OAuth flow."""
    async with httpx.AsyncClient(transport=world.transport(), auth=oauth) as http:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        answer = await http.post(MCP, json=message)
        assert answer.status_code == 200, answer.text


def test_a_workload_token_file_is_read_for_every_token_request(tmp_path: Path) -> None:
    world, server = fake_world()
    token_file = tmp_path / "token"
    token_file.write_text("header.first-token.signature\n")
    storage = MemoryTokenStorage()
    oauth = OAuth(
        grant="jwt_bearer",
        client_id="nightly",
        assertion=WorkloadIdentity(file=token_file),
        storage=storage,
        transport=world.transport(),
    )
    run(call(oauth, world))
    token_file.write_text("header.rotated-token.signature")  # the platform rotated it
    storage.tokens = None
    run(call(oauth, world))
    first, second = grants(server)
    assert first == {
        "grant_type": JWT_BEARER,
        "assertion": "header.first-token.signature",
        "resource": MCP,
        "client_id": "nightly",
    }
    assert second["assertion"] == "header.rotated-token.signature"


def test_a_workload_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    world, server = fake_world()
    monkeypatch.setenv("WORKLOAD_TOKEN", "from.the.environment")
    oauth = OAuth(
        grant="jwt_bearer",
        client_id="job",
        assertion=WorkloadIdentity(env="WORKLOAD_TOKEN"),
        scope="reports:read",
        transport=world.transport(),
    )
    run(call(oauth, world))
    assert grants(server)[0]["assertion"] == "from.the.environment"
    assert grants(server)[0]["scope"] == "reports:read"


def test_no_workload_token_is_an_oauth_error_and_nothing_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET", raising=False)
    empty = tmp_path / "empty"
    empty.write_text("  \n")
    for source in (
        WorkloadIdentity(file=tmp_path / "missing"),
        WorkloadIdentity(env="NOT_SET"),
        WorkloadIdentity(file=empty),
        WorkloadIdentity(token=lambda: "two words"),
    ):
        world, server = fake_world()
        oauth = OAuth(
            grant="jwt_bearer", client_id="job", assertion=source, transport=world.transport()
        )
        with pytest.raises(OAuthError):
            run(call(oauth, world))
        assert server.token_requests == []
    with pytest.raises(ValueError, match="one of"):
        WorkloadIdentity(file="x", env="Y")
    with pytest.raises(ValueError, match="client_id and assertion"):
        OAuth(grant="jwt_bearer", client_id="job")


# -- enterprise-managed authorization, whole ---------------------------------------------


def claims_of(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    return decoded


@pytest.fixture(scope="module")
def enterprise() -> Iterator[tuple[Provider, Serving]]:
    with serve_provider() as idp:
        idp.add_client(
            DESK_APP,
            DESK_SECRET,
            grant_types=(TOKEN_EXCHANGE,),
            jag_client_id=ENTERPRISE_CLIENT,
        )

        def command(port: int) -> list[str]:
            env = [f"TEST_IDP={idp.url}", f"TEST_BASE=http://127.0.0.1:{port}"]
            env.append(f"TEST_CLIENT={ENTERPRISE_CLIENT}")
            target = "tests/auth_proxy/id_jag_server.py:server"
            return ["env", *env, *snodo_run(target, "http", "--port", str(port))]

        with serving(command) as proxy:
            yield idp, proxy


@pytest.mark.parametrize("dpop", [False, True])
def test_an_id_jag_from_the_identity_provider_signs_the_client_in(
    enterprise: tuple[Provider, Serving], dpop: bool
) -> None:
    idp, proxy = enterprise
    storage = MemoryTokenStorage()
    access = CrossAppAccess(
        token_endpoint=idp.token_endpoint,
        id_token=lambda: idp.id_token(DESK_APP),  # the user's sign-in at the desk app
        client_id=DESK_APP,
        client_secret=DESK_SECRET,
    )
    oauth = OAuth(
        grant="jwt_bearer",
        client_id=ENTERPRISE_CLIENT,
        assertion=access,
        storage=storage,
        dpop=dpop,
    )

    async def scenario() -> str:
        async with Client.http(proxy.base + "/mcp", auth=oauth) as client:
            result = await client.call_tool("whoami", {})
            return " ".join(c.text for c in result.content if hasattr(c, "text"))

    assert run(scenario()).startswith(f"{USER['sub']} {USER['email']}")
    exchange = idp.exchanges[-1]
    assert exchange["grant_type"] == TOKEN_EXCHANGE
    assert (exchange["subject_token_type"], exchange["requested_token_type"]) == (ID_TOKEN, ID_JAG)
    assert (exchange["audience"], exchange["resource"]) == (proxy.base, proxy.base + "/mcp")
    tokens = storage.tokens
    assert tokens is not None and tokens.refresh_token is None  # a new grant next time
    assert tokens.token_type == ("DPoP" if dpop else "Bearer")
    assert ("cnf" in claims_of(tokens.access_token)) is dpop


def test_the_identity_provider_refusing_is_an_oauth_error(
    enterprise: tuple[Provider, Serving],
) -> None:
    idp, proxy = enterprise
    access = CrossAppAccess(
        token_endpoint=idp.token_endpoint,
        id_token=idp.id_token("another-app"),  # issued to another client: refused there
        client_id=DESK_APP,
        client_secret=DESK_SECRET,
    )
    oauth = OAuth(grant="jwt_bearer", client_id=ENTERPRISE_CLIENT, assertion=access)

    async def scenario() -> None:
        async with Client.http(proxy.base + "/mcp", auth=oauth) as client:
            await client.list_tools()

    with pytest.raises(OAuthError, match="refused the token exchange: 400 invalid_grant"):
        run(scenario())


# -- the documentation's programs ---------------------------------------------------------


def program(name: str, url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, f"docs/examples/{name}", url],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_enterprise_program_lists_the_tools(
    enterprise: tuple[Provider, Serving], tmp_path: Path
) -> None:
    idp, proxy = enterprise
    id_token = tmp_path / "id_token.jwt"
    id_token.write_text(idp.id_token(DESK_APP))
    done = program(
        "oauth_enterprise.py",
        proxy.base + "/mcp",
        {
            "IDP_TOKEN_ENDPOINT": idp.token_endpoint,
            "IDP_CLIENT_ID": DESK_APP,
            "IDP_CLIENT_SECRET": DESK_SECRET,
            "MCP_CLIENT_ID": ENTERPRISE_CLIENT,
            "ID_TOKEN_FILE": str(id_token),
        },
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["whoami"]


def test_the_workload_program_lists_the_tools(tmp_path: Path) -> None:
    """A platform's token (signed by a key the provider trusts for that platform) is
    traded at the provider for a token the protected server of tests/auth/servers.py
    takes."""
    platform = ECKey.generate_key("P-256", {"kid": "cluster-1"})
    with serve_provider() as idp:
        idp.trust_workloads("https://kubernetes.default.svc", KeySet([platform]))
        idp.add_client("nightly-report", None, grant_types=(JWT_BEARER,))
        now = int(time.time())
        claims = {
            "iss": "https://kubernetes.default.svc",
            "sub": "system:serviceaccount:reports:nightly",
            "aud": idp.issuer,
            "iat": now,
            "exp": now + 600,
        }
        token = tmp_path / "mcp-token"
        token.write_text(jwt.encode({"alg": "ES256", "kid": "cluster-1"}, claims, platform))

        def command(port: int) -> list[str]:
            env = [f"TEST_RESOURCE=http://127.0.0.1:{port}/mcp", f"TEST_ISSUER={idp.url}"]
            target = "tests/auth/servers.py:server"
            return ["env", *env, *snodo_run(target, "http", "--port", str(port))]

        with serving(command) as mcp:
            settings = {"WORKLOAD_TOKEN_FILE": str(token), "MCP_CLIENT_ID": "nightly-report"}
            done = program("oauth_workload.py", mcp.base + "/mcp", settings)
        assert done.returncode == 0, done.stderr
        assert "whoami" in done.stdout.split()
        granted = [form for form, _ in idp.token_requests if form["grant_type"] == JWT_BEARER]
        assert [form["assertion"] for form in granted] == [token.read_text()]
