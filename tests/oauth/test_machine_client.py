"""Machine clients: the client credentials grant, authenticated by a secret or by a JWT
the client signs with its key (``private_key_jwt``, RFC 7523).

The assertion is checked claim by claim against the key's public half, then used for
real: ``Client.http`` with ``OAuth(grant="client_credentials", client_key=...)`` against
``snodo run tests/auth/servers.py:server``, whose tokens come from the loopback provider
of tests/support/idp.py; that provider verifies the assertion as an authorization
server does (signature by a registered key, iss/sub, audience, expiry, unused jti).
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, OKPKey, RSAKey

from snodo.client import Client
from snodo.oauth import ClientKey, OAuth, OAuthError
from snodo.oauth.assertion import ASSERTION_TYPE
from tests.oauth.fakes import AS1, MCP, AuthServer, World
from tests.support.idp import Provider, serve_provider
from tests.support.paths import ROOT
from tests.support.processes import serving as running
from tests.support.processes import snodo_run

# -- the assertion ------------------------------------------------------------------------


def test_the_assertion_names_the_client_the_endpoint_and_expires_soon() -> None:
    key = ECKey.generate_key("P-256", {"kid": "svc-key-1"})
    signer = ClientKey(key)
    before = int(time.time())
    first = jwt.decode(signer.assertion("svc", "https://as/token", "https://as"), key)
    second = jwt.decode(signer.assertion("svc", "https://as/token", "https://as"), key)
    assert first.header == {"alg": "ES256", "typ": "JWT", "kid": "svc-key-1"}
    claims = first.claims
    assert (claims["iss"], claims["sub"], claims["aud"]) == ("svc", "svc", "https://as/token")
    assert claims["iat"] >= before and claims["exp"] - claims["iat"] == 60
    assert claims["jti"] != second.claims["jti"] and len(claims["jti"]) >= 32


def test_the_issuer_as_audience_and_a_given_kid() -> None:
    key = ECKey.generate_key("P-384")
    signer = ClientKey(key.as_pem(private=True), key_id="k7", audience="issuer", lifetime=30)
    assertion = signer.assertion("svc", "https://as/token", "https://as")
    token = jwt.decode(assertion, key, algorithms=["ES384"])
    assert (token.header["alg"], token.header["kid"]) == ("ES384", "k7")
    assert token.claims["aud"] == "https://as"
    assert token.claims["exp"] - token.claims["iat"] == 30


def test_keys_load_from_jwk_and_pem_with_their_algorithm() -> None:
    rsa = RSAKey.generate_key(2048)
    ed = OKPKey.generate_key("Ed25519")
    assert ClientKey(rsa.as_dict(private=True)).algorithm == "RS256"
    assert ClientKey(rsa.as_pem(private=True)).algorithm == "RS256"
    assert ClientKey(ed).algorithm == "EdDSA"
    assert "kid" not in jwt.decode(ClientKey(rsa).assertion("c", "t", "i"), rsa).header


def test_a_public_key_or_nonsense_is_refused() -> None:
    key = ECKey.generate_key("P-256")
    with pytest.raises(ValueError, match="public key"):
        ClientKey(key.as_dict(private=False))
    with pytest.raises(ValueError, match="EC, RSA or OKP"):
        ClientKey("-----BEGIN NOTHING-----")
    with pytest.raises(ValueError, match="audience"):
        ClientKey(key, audience="resource")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="in place of client_secret"):
        OAuth(
            grant="client_credentials",
            client_id="svc",
            client_secret="s",
            client_key=ClientKey(key),
        )


# -- the token request on the wire ----------------------------------------------------------


def list_tools(world: World, oauth: OAuth) -> httpx.Response:
    async def main() -> httpx.Response:
        async with httpx.AsyncClient(transport=world.transport(), auth=oauth) as http:
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            return await http.post(MCP, json=message)

    return asyncio.run(main())


def test_the_token_request_carries_the_assertion_and_no_secret() -> None:
    key = ECKey.generate_key("P-256", {"kid": "k"})
    server = AuthServer(AS1, auth_methods=["private_key_jwt"])
    world = World({AS1: server}, challenge_scope="mcp:basic")
    oauth = OAuth(
        grant="client_credentials",
        client_id="svc",
        client_key=ClientKey(key),
        transport=world.transport(),
    )
    assert list_tools(world, oauth).status_code == 200
    ((form, header),) = server.token_requests
    assert header is None
    assertion = form.pop("client_assertion")
    assert form == {
        "grant_type": "client_credentials",
        "scope": "mcp:basic",
        "resource": world.resource,
        "client_id": "svc",
        "client_assertion_type": ASSERTION_TYPE,
    }
    assert jwt.decode(assertion, key).claims["aud"] == f"{AS1}/token"


def test_a_server_without_private_key_jwt_is_told_apart() -> None:
    world = World({AS1: AuthServer(AS1, auth_methods=["client_secret_basic"])})
    oauth = OAuth(
        grant="client_credentials",
        client_id="svc",
        client_key=ClientKey(ECKey.generate_key("P-256")),
        transport=world.transport(),
    )
    with pytest.raises(OAuthError, match="does not accept private_key_jwt"):
        list_tools(world, oauth)


# -- end to end: a real server, the loopback provider ---------------------------------------


@dataclass
class Site:
    idp: Provider
    resource: str


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve_provider(Provider(alg="ES256")) as idp:

        def command(port: int) -> list[str]:
            env = [f"TEST_RESOURCE=http://127.0.0.1:{port}/mcp", f"TEST_ISSUER={idp.url}"]
            target = "tests/auth/servers.py:server"
            return ["env", *env, *snodo_run(target, "http", "--port", str(port))]

        with running(command) as mcp:
            yield Site(idp, f"{mcp.base}/mcp")


def whoami(site: Site, oauth: OAuth) -> str:
    async def main() -> str:
        async with Client.http(site.resource, auth=oauth) as client:
            result = await client.call_tool("whoami", {})
        text: str = result.content[0].text  # type: ignore[union-attr]
        return text

    return asyncio.run(main())


MACHINE = ("client_credentials",)


def test_a_machine_client_signs_in_with_its_key(site: Site) -> None:
    key = ECKey.generate_key("P-256", {"kid": "robot-1"})
    public = KeySet([ECKey.import_key(key.as_dict(private=False))])
    site.idp.add_client("robot", None, keys=public, grant_types=MACHINE)
    oauth = OAuth(grant="client_credentials", client_id="robot", client_key=ClientKey(key))
    assert whoami(site, oauth) == "robot files:read files:write"
    header, claims = site.idp.assertions[-1]
    assert header["kid"] == "robot-1"
    assert claims["aud"] == site.idp.token_endpoint
    form, authorization = site.idp.token_requests[-1]
    assert authorization is None and "client_secret" not in form
    assert form["resource"] == site.resource


def test_the_issuer_as_audience_is_accepted_too(site: Site) -> None:
    key = ECKey.generate_key("P-256")
    site.idp.add_client("robot-iss", None, keys=KeySet([key]), grant_types=MACHINE)
    signer = ClientKey(key, audience="issuer")
    oauth = OAuth(grant="client_credentials", client_id="robot-iss", client_key=signer)
    assert whoami(site, oauth) == "robot-iss files:read files:write"
    assert site.idp.assertions[-1][1]["aud"] == site.idp.issuer


def test_a_machine_client_with_a_secret(site: Site) -> None:
    site.idp.add_client("batch", "batch secret", grant_types=MACHINE)
    oauth = OAuth(grant="client_credentials", client_id="batch", client_secret="batch secret")
    assert whoami(site, oauth) == "batch files:read files:write"


def test_a_key_the_provider_does_not_know_is_refused(site: Site) -> None:
    registered = ECKey.generate_key("P-256", {"kid": "k"})
    site.idp.add_client("impostor", None, keys=KeySet([registered]), grant_types=MACHINE)
    other = ClientKey(ECKey.generate_key("P-256", {"kid": "k"}))
    oauth = OAuth(grant="client_credentials", client_id="impostor", client_key=other)
    with pytest.raises(OAuthError, match="401 invalid_client"):
        whoami(site, oauth)


def test_the_machine_client_program_of_the_docs(
    site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/examples/oauth_machine_client.py, with its key in a PEM file."""
    path = ROOT / "docs" / "examples" / "oauth_machine_client.py"
    spec = importlib.util.spec_from_file_location("oauth_machine_client", path)
    assert spec is not None and spec.loader is not None
    program = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(program)
    key = RSAKey.generate_key(2048)
    public = KeySet([RSAKey.import_key(key.as_dict(private=False), {"kid": "nightly-report-1"})])
    site.idp.add_client(program.CLIENT_ID, None, keys=public, grant_types=MACHINE)
    pem = tmp_path / "key.pem"
    pem.write_bytes(key.as_pem(private=True))
    asyncio.run(program.main(site.resource, str(pem)))
    assert "whoami" in capsys.readouterr().out.split()
    header, claims = site.idp.assertions[-1]
    assert (header["alg"], header["kid"], claims["sub"]) == (
        "RS256",
        "nightly-report-1",
        program.CLIENT_ID,
    )
