"""The client's DPoP (RFC 9449) against snodo's own checks, in one httpx.MockTransport:
an authorization server and an MCP server that both require their nonce. The client
proves its key at the token request, retries once with the nonce each server hands
out, presents the bound token with the ``DPoP`` scheme and a fresh proof per request,
and keeps using a nonce it was given."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import httpx

from snodo.auth.dpop import DPoP, DPoPRefusal
from snodo.auth.protected import ProofRefused
from snodo.oauth import DPoPKey, MemoryTokenStorage, OAuth
from snodo.oauth.dpop import DPoPSession, target

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
AS = "https://as.example.com"
TOKEN = AS + "/token"


class Servers:
    """The authorization server and the MCP server, each with a DPoP that asks for nonces."""

    def __init__(self) -> None:
        self.at_token = DPoP(nonce=True, secret=b"a" * 32)
        self.at_mcp = DPoP(nonce=True, secret=b"m" * 32)
        self.token_proofs: list[str] = []
        self.mcp_requests: list[tuple[str | None, str | None, int]] = []
        """(Authorization, DPoP, the status answered) of each MCP request."""

    async def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == PRM:
            return httpx.Response(200, json={"resource": MCP, "authorization_servers": [AS]})
        if url == AS + "/.well-known/oauth-authorization-server":
            return httpx.Response(
                200,
                json={
                    "issuer": AS,
                    "token_endpoint": TOKEN,
                    "grant_types_supported": ["client_credentials"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                    "dpop_signing_alg_values_supported": ["ES256"],
                },
            )
        if url == TOKEN:
            return await self.token(request)
        if url.split("?", maxsplit=1)[0] == MCP:
            return await self.mcp(request)
        return httpx.Response(404)

    async def token(self, request: httpx.Request) -> httpx.Response:
        self.token_proofs.append(request.headers.get("dpop", ""))
        try:
            jkt = await self.at_token.token_request(request.headers, TOKEN)
        except DPoPRefusal as refusal:
            answer = refusal.answer
            headers = [(k.decode(), v.decode()) for k, v in answer.headers]
            return httpx.Response(answer.status, headers=headers, content=answer.body)
        assert jkt is not None
        return httpx.Response(
            200, json={"access_token": f"at-{jkt[:8]}", "token_type": "DPoP", "expires_in": 600}
        )

    async def mcp(self, request: httpx.Request) -> httpx.Response:
        authorization = request.headers.get("authorization")
        proof = request.headers.get("dpop")
        status, headers = 200, {}
        if authorization is None:
            status = 401
            headers["www-authenticate"] = f'DPoP resource_metadata="{PRM}", algs="ES256"'
        else:
            scheme, _, token = authorization.partition(" ")
            try:
                proven = await self.at_mcp.check(proof, request.method, MCP, token)
                # The token names its key: the one it was issued to proves it.
                assert token == f"at-{proven.jkt[:8]}" and scheme == "DPoP"
            except ProofRefused as refused:
                status = 401
                headers["www-authenticate"] = f'DPoP error="{refused.error}"'
                if refused.nonce:
                    headers["dpop-nonce"] = refused.nonce
        self.mcp_requests.append((authorization, proof, status))
        if status != 200:
            return httpx.Response(status, headers=headers, json={"error": "unauthorized"})
        message = json.loads(request.content)
        result = {"tools": []}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": result})


def claims(proof: str) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(proof.split(".")[1] + "=="))
    return decoded


async def list_twice(oauth: OAuth, servers: Servers) -> None:
    transport = httpx.MockTransport(servers.handle)
    oauth.transport = transport
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient(transport=transport, auth=oauth) as http:
        for _ in range(2):
            answer = await http.post(MCP + "?ignored=1", json=message)
            assert answer.status_code == 200, answer.text


def test_the_client_proves_its_key_and_honours_both_nonces() -> None:
    servers = Servers()
    key = DPoPKey()
    storage = MemoryTokenStorage()
    oauth = OAuth(
        grant="client_credentials",
        client_id="svc",
        client_secret="svc-secret",
        storage=storage,
        dpop=key,
    )
    asyncio.run(list_twice(oauth, servers))

    first, second = (claims(p) for p in servers.token_proofs)
    assert "nonce" not in first and second["nonce"] == servers.at_token.nonces.current()
    assert first["jti"] != second["jti"] and "ath" not in second
    assert (second["htm"], second["htu"]) == ("POST", TOKEN)
    tokens = storage.tokens
    assert tokens is not None and tokens.token_type == "DPoP"
    assert tokens.dpop_key is not None and DPoPKey.from_jwk(tokens.dpop_key).thumbprint == (
        key.thumbprint
    )

    statuses = [status for _, _, status in servers.mcp_requests]
    assert statuses == [401, 401, 200, 200]  # no token; the nonce asked; with it; kept
    presented = [(a, p) for a, p, _ in servers.mcp_requests[1:]]
    assert all(a == f"DPoP {tokens.access_token}" for a, _ in presented)
    proofs = [claims(p or "") for _, p in presented]
    assert "nonce" not in proofs[0]
    assert proofs[1]["nonce"] == proofs[2]["nonce"] == servers.at_mcp.nonces.current()
    assert len({p["jti"] for p in proofs}) == 3
    assert all(p["htu"] == target(MCP) == MCP and p["htm"] == "POST" for p in proofs)


def test_a_server_that_lists_other_algorithms_gets_no_proof() -> None:
    """DPoP only where the authorization server can take the key's algorithm."""
    session = DPoPSession(DPoPKey())
    assert session.proof_key({"dpop_signing_alg_values_supported": ["RS256"]}, None) is None
    assert session.proof_key({"dpop_signing_alg_values_supported": ["ES256"]}, None) is not None
    assert session.proof_key({}, None) is not None  # not said: tried
    assert DPoPSession(None).proof_key({"dpop_signing_alg_values_supported": ["ES256"]}, None) is (
        None
    )
