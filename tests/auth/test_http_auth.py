"""OAuth over Streamable HTTP against real processes: ``snodo run tests/auth/servers.py:server``
verifying JWTs from a loopback authorization server (tests/auth/issuer.py).

Status codes, challenge headers and bodies are compared literally.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from joserfc.jwk import ECKey

from snodo.core.http_headers import request_headers
from tests.auth.issuer import Issuer, serving
from tests.support.processes import free_port, snodo_run
from tests.support.processes import serving as running
from tests.support.wire import VERSION, request


@dataclass
class Site:
    issuer: Issuer
    resource: str
    metadata_url: str
    http: httpx.Client

    def post(self, message: dict[str, Any], token: str | None = None, **extra: str) -> Any:
        headers = {"content-type": "application/json", "accept": "application/json"}
        headers |= request_headers(message["method"], message["params"], VERSION)
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return self.http.post(self.resource, json=message, headers=headers | extra)

    def token(self, scope: str = "files:read", **extra: Any) -> str:
        return self.issuer.mint(self.resource, scope, **extra)

    def challenge(self, error: str | None, scope: str) -> str:
        head = f'Bearer error="{error}", ' if error else "Bearer "
        return f'{head}resource_metadata="{self.metadata_url}", scope="{scope}"'


def _site(*settings: str) -> Iterator[Site]:
    issuer_port = free_port()
    issuer = Issuer(f"http://127.0.0.1:{issuer_port}")

    def command(port: int) -> list[str]:
        env = [f"TEST_RESOURCE=http://127.0.0.1:{port}/mcp", f"TEST_ISSUER={issuer.url}"]
        target = "tests/auth/servers.py:server"
        return ["env", *env, *settings, *snodo_run(target, "http", "--port", str(port))]

    with serving(issuer, issuer_port), httpx.Client(timeout=10) as http, running(command) as mcp:
        metadata_url = f"{mcp.base}/.well-known/oauth-protected-resource/mcp"
        yield Site(issuer, f"{mcp.base}/mcp", metadata_url, http)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    yield from _site()


@pytest.fixture(scope="module")
def concealing() -> Iterator[Site]:
    """The same server with ``hide_unauthorized``."""
    yield from _site("TEST_HIDE=1")


def call(name: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}, **params}
    return request("tools/call", params, capabilities={"elicitation": {"form": {}}})


def text(response: Any) -> str:
    assert response.status_code == 200, response.text
    result: str = response.json()["result"]["content"][0]["text"]
    return result


# -- metadata ------------------------------------------------------------------------------


def test_metadata_at_both_well_known_paths(site: Site) -> None:
    expected = {
        "resource": site.resource,
        "authorization_servers": [site.issuer.url],
        "scopes_supported": ["files:read", "files:write"],
        "bearer_methods_supported": ["header"],
    }
    root = site.metadata_url.removesuffix("/mcp")
    for url in (site.metadata_url, root):
        answer = site.http.get(url)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        assert answer.headers["access-control-allow-origin"] == "*"
        assert answer.json() == expected
    assert site.http.post(site.metadata_url).status_code == 405
    assert site.http.get(site.metadata_url, headers={"host": "evil.example"}).status_code == 421


# -- 401 and 400 ---------------------------------------------------------------------------


def test_no_token_is_401_naming_the_metadata(site: Site) -> None:
    for authorization in (None, "Basic YWxpY2U6cHc="):
        extra = {"authorization": authorization} if authorization else {}
        answer = site.post(call("whoami"), **extra)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == (
            f'Bearer resource_metadata="{site.metadata_url}", scope="files:read files:write"'
        )
        assert answer.json() == {
            "error": "invalid_token",
            "error_description": "Authorization required",
        }


def test_malformed_credential_is_400(site: Site) -> None:
    for value in ("Bearer two words", 'Bearer tok"en', "Bearer a, Bearer b"):
        answer = site.post(call("whoami"), authorization=value)
        assert answer.status_code == 400, value
        assert answer.headers["www-authenticate"] == site.challenge(
            "invalid_request", "files:read files:write"
        )


def test_bad_tokens_are_401_invalid_token(site: Site) -> None:
    issuer = site.issuer
    outsider = ECKey.generate_key("P-256", {"kid": issuer.keys[0].kid})
    unsigned = ".".join(
        part.rstrip("=")
        for part in (
            _b64({"alg": "none", "kid": issuer.keys[0].kid}),
            _b64(issuer.claims(site.resource)),
            "",
        )
    )
    bad = {
        "wrong audience": site.issuer.mint("http://127.0.0.1:1/elsewhere"),
        "expired": site.token(exp=1_000_000),
        "not yet valid": site.token(nbf=4_000_000_000),
        "no expiry": site.issuer.mint(site.resource, drop=("exp",)),
        "other issuer": site.token(iss="http://127.0.0.1:3"),
        "forged": site.issuer.mint(site.resource, key=outsider),
        "unsigned": unsigned,
        "not a JWT": "opaque-token-value",
    }
    for what, token in bad.items():
        answer = site.post(call("whoami"), token)
        assert answer.status_code == 401, what
        assert answer.headers["www-authenticate"] == site.challenge(
            "invalid_token", "files:read files:write"
        ), what
        assert answer.json()["error"] == "invalid_token"


def _b64(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode()


# -- accepted tokens, scopes ---------------------------------------------------------------


def test_subject_and_widened_scopes_reach_the_handler(site: Site) -> None:
    assert text(site.post(call("whoami"), site.token())) == "alice files:read"
    admin = site.token("files:admin")
    assert text(site.post(call("whoami"), admin)) == "alice files:admin files:read files:write"
    upper = site.issuer.mint(site.resource.replace("http://", "HTTP://"))
    assert text(site.post(call("whoami"), upper)) == "alice files:read"


def test_missing_tool_scope_is_403_insufficient_scope(site: Site) -> None:
    answer = site.post(call("write"), site.token())
    assert answer.status_code == 403
    assert answer.headers["www-authenticate"] == site.challenge("insufficient_scope", "files:write")
    assert answer.json() == {
        "error": "insufficient_scope",
        "error_description": "Insufficient scope",
    }
    assert text(site.post(call("write"), site.token("files:write"))) == "written"


def test_challenge_names_every_scope_the_item_needs(site: Site) -> None:
    answer = site.post(call("purge"), site.token())
    assert answer.headers["www-authenticate"] == site.challenge(
        "insufficient_scope", "files:admin files:read"
    )
    assert text(site.post(call("purge"), site.token("files:admin"))) == "purged"


def test_resource_template_and_prompt_scopes(site: Site) -> None:
    reader = site.token()
    cases = [
        (request("resources/read", {"uri": "file://secret"}), "files:admin"),
        (request("resources/read", {"uri": "file://docs/a"}), "files:write"),
        (request("prompts/get", {"name": "compose", "arguments": {"topic": "x"}}), "files:write"),
    ]
    for message, needed in cases:
        answer = site.post(message, reader)
        assert answer.status_code == 403
        assert answer.headers["www-authenticate"] == site.challenge("insufficient_scope", needed)
    writer = site.token("files:write")
    answer = site.post(request("resources/read", {"uri": "file://docs/a"}), writer)
    assert answer.json()["result"]["contents"][0]["text"] == "doc a"
    answer = site.post(cases[2][0], writer)
    assert answer.json()["result"]["messages"][0]["content"]["text"] == "Write about x"


def test_scopes_required_by_the_arguments(site: Site) -> None:
    answer = site.post(call("dynamic", {"target": "write"}), site.token())
    assert answer.status_code == 403
    assert answer.headers["www-authenticate"] == site.challenge("insufficient_scope", "files:write")
    assert text(site.post(call("dynamic", {"target": "read"}), site.token())) == "did read"


def test_listing_shows_items_the_token_cannot_use(site: Site) -> None:
    answer = site.post(request("tools/list"), site.token())
    names = [tool["name"] for tool in answer.json()["result"]["tools"]]
    assert names == ["whoami", "claims", "write", "purge", "ask", "dynamic", "relocate"]


def test_hidden_items_answer_as_missing_ones_over_http(concealing: Site) -> None:
    reader = concealing.token()
    listed = concealing.post(request("tools/list"), reader).json()["result"]["tools"]
    assert [tool["name"] for tool in listed] == ["whoami", "claims", "ask", "dynamic"]
    hidden_and_missing = [
        (call("purge"), call("nothing")),
        # Its Mcp-Param header is not asked for: a missing tool has none.
        (call("relocate", {"region": "eu"}), call("nothing", {"region": "eu"})),
        (
            request("resources/read", {"uri": "file://secret"}),
            request("resources/read", {"uri": "file://nothing"}),
        ),
        (
            request("prompts/get", {"name": "compose", "arguments": {"topic": "x"}}),
            request("prompts/get", {"name": "nothing", "arguments": {"topic": "x"}}),
        ),
    ]
    for hidden, missing in hidden_and_missing:
        params = hidden["params"]
        name, gone = (
            (params.get("name"), "nothing")
            if "name" in params
            else (params["uri"], "file://nothing")
        )
        concealed = concealing.post(hidden, reader)
        absent = concealing.post(missing, reader)
        assert "www-authenticate" not in concealed.headers, name
        assert (concealed.status_code, concealed.text.replace(name, gone)) == (
            absent.status_code,
            absent.text,
        ), name
        assert "files:" not in concealed.text, name
    # With the scopes, each is there.
    admin = concealing.token("files:admin")
    assert text(concealing.post(call("purge"), admin)) == "purged"
    relocate = call("relocate", {"region": "eu"})
    assert text(concealing.post(relocate, admin, **{"mcp-param-region": "eu"})) == "relocated to eu"


def test_request_state_binds_to_the_token_subject(site: Site) -> None:
    alice, bob = site.token(), site.token(sub="bob")
    first = site.post(call("ask"), alice).json()["result"]
    assert first["resultType"] == "input_required"
    retry = call(
        "ask",
        requestState=first["requestState"],
        inputResponses={"name": {"action": "accept", "content": {"name": "Al"}}},
    )
    refused = site.post(retry, bob)
    assert refused.status_code == 400
    assert refused.json()["error"] == {"code": -32602, "message": "Invalid request state"}
    assert text(site.post(retry, alice)) == "hello Al (round one)"


def test_a_client_token_never_opens_the_state_of_a_user_of_the_same_name(site: Site) -> None:
    # A client-credentials token (no sub) whose client_id is alice is not the user alice.
    user, client = site.token(), site.token(drop=("sub",), client_id="alice")
    assert text(site.post(call("whoami"), client)) == "client:alice files:read"
    first = site.post(call("ask"), user).json()["result"]
    retry = call(
        "ask",
        requestState=first["requestState"],
        inputResponses={"name": {"action": "accept", "content": {"name": "Al"}}},
    )
    refused = site.post(retry, client)
    assert refused.status_code == 400
    assert refused.json()["error"] == {"code": -32602, "message": "Invalid request state"}
    # Nor the other way round: a user whose sub looks like a client's principal.
    lookalike = site.token(sub="client:alice")
    assert text(site.post(call("whoami"), lookalike)) == "sub:client:alice files:read"
    asked = site.post(call("ask"), client).json()["result"]
    again = {**retry, "params": {**retry["params"], "requestState": asked["requestState"]}}
    assert site.post(again, lookalike).status_code == 400
    assert text(site.post(again, client)) == "hello Al (round one)"


def test_a_handler_reads_the_claims_of_the_verified_token(site: Site) -> None:
    token = site.token(client_id="app-1", email="alice@example.com", roles=["admin", "ops"])
    answer = text(site.post(call("claims"), token))
    assert answer == "alice app-1 alice@example.com admin,ops exp"
    # Each request's own token: another caller's claims in the next request.
    other = site.token(sub="bob", email="bob@example.com")
    assert text(site.post(call("claims"), other)) == "bob None bob@example.com  exp"


def test_the_probes_answer_without_a_token(site: Site) -> None:
    base = site.resource.removesuffix("/mcp")
    assert site.http.get(f"{base}/healthz").json() == {"status": "ok"}
    assert site.http.get(f"{base}/readyz").json() == {"status": "ready"}
    assert site.post(call("whoami")).status_code == 401  # the endpoint still needs one


def test_every_request_is_authorized_before_its_body_is_read(site: Site) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
    }
    answer = site.http.post(
        site.resource,
        json=initialize,
        headers={"accept": "application/json, text/event-stream"},
    )
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer resource_metadata=")
    answer = site.http.post(
        site.resource, content=b"{not json", headers={"content-type": "application/json"}
    )
    assert answer.status_code == 401


def test_legacy_sessions_are_authorized_the_same_way(site: Site) -> None:
    both = {"accept": "application/json, text/event-stream", "content-type": "application/json"}

    def legacy(message: dict[str, Any], token: str | None, **extra: str) -> httpx.Response:
        headers = both | extra
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return site.http.post(site.resource, json=message, headers=headers)

    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "old", "version": "1"},
        },
    }
    assert legacy(initialize, None).status_code == 401
    reader = site.token()
    opened = legacy(initialize, reader)
    assert opened.status_code == 200, opened.text
    session = {"mcp-session-id": opened.headers["mcp-session-id"]}
    session["mcp-protocol-version"] = "2025-11-25"
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert legacy(done, reader, **session).status_code == 202

    def call_tool(name: str, token: str | None) -> httpx.Response:
        message = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": name, "arguments": {}},
        }
        return legacy(message, token, **session)

    assert call_tool("whoami", None).status_code == 401
    assert call_tool("whoami", reader).json()["result"]["content"][0]["text"] == "alice files:read"
    refused = call_tool("write", reader).json()
    assert refused["error"] == {
        "code": -32600,
        "message": "Insufficient scope",
        "data": {"requiredScopes": ["files:write"]},
    }
    written = call_tool("write", site.token("files:write")).json()
    assert written["result"]["content"][0]["text"] == "written"
    claimed = call_tool("claims", site.token(email="al@example.com")).json()
    assert claimed["result"]["content"][0]["text"] == "alice None al@example.com  exp"
