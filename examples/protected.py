"""A file server protected by OAuth: bearer tokens, scopes per tool, resource metadata.

Reading needs the scope ``files:read``, writing ``files:write`` (which implies reading).
Tokens are JWTs from the authorization server named in the metadata, checked against
its published keys (``snodo[auth]``).

    snodo run examples/protected.py:server --transport http --port 8000
    python examples/protected.py --check

The served ``server`` takes its addresses from ``PROTECTED_RESOURCE`` (default
``http://127.0.0.1:8000/mcp``) and ``PROTECTED_ISSUER`` (default
``http://127.0.0.1:9000``). ``--check`` needs neither: it starts a small authorization
server of its own on loopback (metadata and a key set, tokens minted with its key),
serves this server beside it, and shows each answer: no token 401 with the metadata
address, a valid token 200, a wrong audience, an expired or a forged token 401, a
missing scope 403 ``insufficient_scope``, and a rotated signing key picked up at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import uvicorn
from joserfc import jwt
from joserfc.jwk import ECKey
from pydantic import BaseModel

from snodo import Context, Server
from snodo.auth import JwtVerifier, ProtectedResource
from snodo.client import request_headers
from snodo.transports import HttpApp

FILES: dict[str, str] = {"notes.txt": "remember the milk"}


class Identity(BaseModel):
    principal: str | None
    scopes: list[str]


def build(resource: str, issuer: str) -> Server:
    """The protected server for an MCP endpoint at ``resource``, trusting ``issuer``."""
    files = Server(
        "files",
        "1.0.0",
        authorization=ProtectedResource(
            resource,
            [issuer],
            JwtVerifier(issuer, resource),
            scopes_supported=["files:read", "files:write"],
            required_scopes=["files:read"],
            implied_scopes={"files:write": ["files:read"]},
            resource_name="Example files",
        ),
    )

    @files.tool(scopes=["files:read"])
    def read_file(name: str) -> str:
        """The text of a file."""
        return FILES.get(name, "")

    @files.tool(scopes=["files:write"])
    def write_file(name: str, text: str) -> str:
        """Replace a file's text."""
        FILES[name] = text
        return f"wrote {len(text)} characters to {name}"

    @files.tool
    def whoami(ctx: Context) -> Identity:
        """Who the token speaks for, and what it grants (implied scopes included)."""
        return Identity(principal=ctx.principal, scopes=sorted(ctx.scopes or ()))

    return files


server = build(
    os.environ.get("PROTECTED_RESOURCE", "http://127.0.0.1:8000/mcp"),
    os.environ.get("PROTECTED_ISSUER", "http://127.0.0.1:9000"),
)


# -- the check: a local authorization server, and requests with tokens of every kind ----


class LocalIssuer:
    """Just enough of an authorization server: RFC 8414 metadata and a JWKS, and
    tokens signed with its current key (a key id it has published)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.keys = [ECKey.generate_key("P-256", {"kid": "key-1"})]

    def rotate(self) -> None:
        self.keys.insert(0, ECKey.generate_key("P-256", {"kid": f"key-{len(self.keys) + 1}"}))

    def mint(self, audience: str, scope: str, *, lifetime: float = 300, key: Any = None) -> str:
        signer = key or self.keys[0]
        now = int(time.time())
        claims = {
            "iss": self.url,
            "sub": "alice",
            "aud": audience,
            "scope": scope,
            "iat": now,
            "exp": now + int(lifetime),
            "client_id": "example-client",
        }
        header = {"alg": "ES256", "kid": signer.kid, "typ": "at+jwt"}
        return jwt.encode(header, claims, signer)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        documents = {
            "/.well-known/oauth-authorization-server": {
                "issuer": self.url,
                "jwks_uri": f"{self.url}/jwks.json",
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            },
            "/jwks.json": {"keys": [key.as_dict(private=False) for key in self.keys]},
        }
        document = documents.get(scope["path"])
        body = json.dumps(document).encode() if document is not None else b"not found"
        status = 200 if document is not None else 404
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def serving(app: Any, port: int) -> AsyncIterator[None]:
    """Serve an ASGI app on a loopback port for the duration of the block."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    task = asyncio.create_task(running.serve())
    try:
        for _ in range(200):
            if running.started:
                break
            await asyncio.sleep(0.025)
        else:
            raise RuntimeError(f"port {port} did not start serving")
        yield
    finally:
        running.should_exit = True
        await asyncio.wait_for(task, 10)


async def check() -> int:
    issuer_url = f"http://127.0.0.1:{_free_port()}"
    mcp_port = _free_port()
    resource = f"http://127.0.0.1:{mcp_port}/mcp"
    issuer = LocalIssuer(issuer_url)
    outsider = LocalIssuer(issuer_url)  # same key id, another key: a forger
    metadata_url = f"http://127.0.0.1:{mcp_port}/.well-known/oauth-protected-resource/mcp"
    failures = 0

    def report(what: str, ok: bool, detail: str) -> None:
        nonlocal failures
        failures += not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {what}: {detail}")

    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }

    async def call(http: httpx.AsyncClient, tool: str, token: str | None) -> httpx.Response:
        arguments = {"name": "notes.txt", "text": "buy bread"} if tool == "write_file" else {}
        if tool == "read_file":
            arguments = {"name": "notes.txt"}
        params = {"name": tool, "arguments": arguments, "_meta": meta}
        headers = {"content-type": "application/json", "accept": "application/json"}
        headers |= request_headers("tools/call", params, "2026-07-28")
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        return await http.post(resource, json=body, headers=headers)

    app = HttpApp(build(resource, issuer_url))
    async with (
        serving(issuer, int(issuer_url.rsplit(":", 1)[1])),
        serving(app, mcp_port),
        httpx.AsyncClient(timeout=10) as http,
    ):
        print(f"authorization server {issuer_url}, MCP endpoint {resource}")
        found = await http.get(metadata_url)
        document = found.json() if found.status_code == 200 else {}
        report(
            "resource metadata",
            document.get("authorization_servers") == [issuer_url],
            f"{found.status_code} {json.dumps(document)}",
        )

        expected_401 = f'Bearer resource_metadata="{metadata_url}", scope="files:read"'
        answer = await call(http, "read_file", None)
        challenge = answer.headers.get("www-authenticate", "")
        report("no token", answer.status_code == 401 and challenge == expected_401, challenge)

        read = issuer.mint(resource, "files:read")
        answer = await call(http, "read_file", read)
        text = answer.json()["result"]["content"][0]["text"] if answer.status_code == 200 else ""
        report("valid token", answer.status_code == 200 and text == FILES["notes.txt"], text)

        refusals = {
            "wrong audience": issuer.mint("http://127.0.0.1:1/other", "files:read"),
            "expired token": issuer.mint(resource, "files:read", lifetime=-120),
            "forged token": outsider.mint(resource, "files:read"),
        }
        for what, token in refusals.items():
            answer = await call(http, "read_file", token)
            challenge = answer.headers.get("www-authenticate", "")
            ok = answer.status_code == 401 and challenge.startswith('Bearer error="invalid_token"')
            report(what, ok, f"{answer.status_code} {challenge}")

        answer = await call(http, "write_file", read)
        challenge = answer.headers.get("www-authenticate", "")
        expected_403 = (
            f'Bearer error="insufficient_scope", resource_metadata="{metadata_url}", '
            'scope="files:read files:write"'
        )
        ok = answer.status_code == 403 and challenge == expected_403
        report("missing scope", ok, f"{answer.status_code} {challenge}")

        answer = await call(http, "write_file", issuer.mint(resource, "files:write"))
        report("stepped-up token", answer.status_code == 200, str(answer.status_code))

        issuer.rotate()
        answer = await call(http, "whoami", issuer.mint(resource, "files:read"))
        who = answer.json()["result"]["structuredContent"] if answer.status_code == 200 else {}
        ok = who == {"principal": "alice", "scopes": ["files:read"]}
        report("rotated signing key", ok, f"{answer.status_code} {json.dumps(who)}")

    total = 9
    print(f"protected: {total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--check"]:
        sys.exit(__doc__)
    sys.exit(asyncio.run(check()))
