"""An authorization server and a protected MCP server as one httpx.MockTransport.

They answer the way a spec-following deployment does, with switches for the ways one
can misbehave, and record every request so tests can assert the literal wire.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import httpx

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
AS1 = "https://as.example.com"
AS2 = "https://as2.example.com"
REDIRECT = "http://127.0.0.1:8765/callback"


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class AuthServer:
    issuer: str
    metadata_issuer: str | None = None  # served in metadata; None: the issuer
    iss_supported: bool | None = True
    iss: str = "correct"  # correct | omit | wrong | normalized
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    scopes_supported: list[str] | None = None
    registration: bool = True
    registered_secret: str | None = None
    registered_method: str | None = None
    cimd: bool = False
    refresh_tokens: bool = False
    authorization_endpoint: str | None = None  # served in metadata; None: {issuer}/authorize
    # what happened
    registrations: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[tuple[dict[str, str], str | None]] = field(default_factory=list)
    challenge: str | None = None
    issued: int = 0

    def metadata(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": self.authorization_endpoint or f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }
        if self.registration:
            data["registration_endpoint"] = f"{self.issuer}/register"
        if self.iss_supported is not None:
            data["authorization_response_iss_parameter_supported"] = self.iss_supported
        if self.scopes_supported is not None:
            data["scopes_supported"] = self.scopes_supported
        if self.cimd:
            data["client_id_metadata_document_supported"] = True
        return data

    def handle(self, request: httpx.Request, world: World) -> httpx.Response:
        path = request.url.path
        if request.method == "GET" and path == "/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=self.metadata())
        if path == "/register":
            body = json.loads(request.content)
            self.registrations.append(body)
            answer = {"client_id": f"client-{self.issuer}-{len(self.registrations)}"}
            if self.registered_secret:
                answer["client_secret"] = self.registered_secret
            if self.registered_method:
                answer["token_endpoint_auth_method"] = self.registered_method
            return httpx.Response(201, json=answer)
        if path == "/authorize":
            query = dict(parse_qsl(request.url.query.decode()))
            self.authorizations.append(query)
            self.challenge = query.get("code_challenge")
            back: dict[str, str] = {"code": "the-code", "state": query.get("state", "")}
            if self.iss == "correct":
                back["iss"] = self.issuer
            elif self.iss == "wrong":
                back["iss"] = "https://evil.example.com"
            elif self.iss == "normalized":
                back["iss"] = self.issuer + "/"
            return httpx.Response(
                302, headers={"location": f"{query['redirect_uri']}?{urlencode(back)}"}
            )
        if path == "/token":
            form = dict(parse_qsl(request.content.decode()))
            self.token_requests.append((form, request.headers.get("authorization")))
            if form["grant_type"] == "authorization_code":
                if s256(form.get("code_verifier", "")) != self.challenge:
                    return httpx.Response(400, json={"error": "invalid_grant"})
                scopes = (self.authorizations[-1].get("scope") or "").split()
            elif form["grant_type"] == "refresh_token":
                if form.get("refresh_token") not in world.refresh_tokens:
                    return httpx.Response(400, json={"error": "invalid_grant"})
                scopes = world.refresh_tokens[form["refresh_token"]]
            else:
                scopes = (form.get("scope") or "").split()
            self.issued += 1
            token = f"token-{urlsplit(self.issuer).netloc}-{self.issued}"
            world.tokens[token] = (self.issuer, scopes)
            answer: dict[str, Any] = {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": 3600,
            }
            if scopes:
                answer["scope"] = " ".join(scopes)
            if self.refresh_tokens:
                refresh = f"refresh-{self.issued}"
                world.refresh_tokens[refresh] = scopes
                answer["refresh_token"] = refresh
            return httpx.Response(200, json=answer)
        return httpx.Response(404)


@dataclass
class World:
    """The MCP server, its resource metadata, and the authorization servers."""

    servers: dict[str, AuthServer]
    current: str = AS1  # the authorization server the resource metadata names
    resource: str = MCP
    scopes_supported: list[str] | None = None
    challenge_scope: str | None = None
    needs: dict[str, list[str]] = field(default_factory=dict)  # method -> scopes
    always_forbid: bool = False
    link_metadata: bool = True
    metadata_link: str = PRM  # the resource_metadata a challenge names
    tokens: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    refresh_tokens: dict[str, list[str]] = field(default_factory=dict)
    revoked: set[str] = field(default_factory=set)
    mcp_requests: list[tuple[str | None, dict[str, Any]]] = field(default_factory=list)
    """(Authorization header, JSON-RPC message) as each request arrived."""
    metadata_requests: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    """Every URL requested, of any server."""

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.requests.append(url)
        origin = f"{request.url.scheme}://{request.url.host}"
        if origin in self.servers:
            if request.url.path.startswith("/.well-known/"):
                self.metadata_requests.append(url)
            return self.servers[origin].handle(request, self)
        if url == PRM:
            self.metadata_requests.append(url)
            prm: dict[str, Any] = {
                "resource": self.resource,
                "authorization_servers": [self.current],
            }
            if self.scopes_supported is not None:
                prm["scopes_supported"] = self.scopes_supported
            return httpx.Response(200, json=prm)
        if url == MCP:
            return self.mcp(request)
        return httpx.Response(404)

    def _challenge(self, status: int, scope: str | None, error: str | None) -> httpx.Response:
        params = []
        if error:
            params.append(f'error="{error}"')
        if scope:
            params.append(f'scope="{scope}"')
        if self.link_metadata:
            params.append(f'resource_metadata="{self.metadata_link}"')
        header = "Bearer " + ", ".join(params) if params else "Bearer"
        return httpx.Response(
            status, headers={"www-authenticate": header}, json={"error": error or "invalid_token"}
        )

    def mcp(self, request: httpx.Request) -> httpx.Response:
        message = json.loads(request.content)
        self.mcp_requests.append((request.headers.get("authorization"), message))
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else None
        held = self.tokens.get(token) if token and token not in self.revoked else None
        if held is None or held[0] != self.current:
            return self._challenge(401, self.challenge_scope, None)
        needed = self.needs.get(message["method"], [])
        if self.always_forbid or not set(needed) <= set(held[1]):
            scope = " ".join(needed) or "mcp:admin"
            return self._challenge(403, scope, "insufficient_scope")
        result: dict[str, Any] = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
        if message["method"] == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}]}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": result})
