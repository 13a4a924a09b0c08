"""A small authorization server for tests: RFC 8414 metadata, a JWKS, RFC 7662 introspection.

Tokens are minted directly (no authorization flow): JWTs signed with the issuer's
current key, or opaque strings recorded for introspection. Counters say how often each
document was fetched, so tests can tell a cached key set from a refetched one.
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any

import uvicorn
from joserfc import jwt
from joserfc.jwk import ECKey

CLIENT_ID = "resource-server"
CLIENT_SECRET = "s3cret:with/odd chars"


class Issuer:
    def __init__(self, url: str, *, metadata_issuer: str | None = None) -> None:
        self.url = url
        self.metadata_issuer = metadata_issuer or url
        """What the metadata document claims as issuer (a liar when it differs)."""
        self.keys = [ECKey.generate_key("P-256", {"kid": "key-1"})]
        self.fetches: dict[str, int] = {}
        self.opaque: dict[str, dict[str, Any]] = {}
        self.introspection_auth: list[str | None] = []
        self.introspection_status = 200

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.url).path.rstrip("/")

    def rotate(self) -> None:
        self.keys.insert(0, ECKey.generate_key("P-256", {"kid": f"key-{len(self.keys) + 1}"}))

    def claims(self, audience: Any, scope: str = "files:read", **extra: Any) -> dict[str, Any]:
        now = int(time.time())
        return {
            "iss": self.url,
            "sub": "alice",
            "aud": audience,
            "scope": scope,
            "iat": now,
            "exp": now + 300,
            **extra,
        }

    def mint(
        self,
        audience: Any,
        scope: str = "files:read",
        *,
        key: ECKey | None = None,
        header: dict[str, Any] | None = None,
        drop: tuple[str, ...] = (),
        **extra: Any,
    ) -> str:
        signer = key or self.keys[0]
        claims = {k: v for k, v in self.claims(audience, scope, **extra).items() if k not in drop}
        return jwt.encode(header or {"alg": "ES256", "kid": signer.kid}, claims, signer)

    def opaque_token(self, answer: dict[str, Any]) -> str:
        token = f"opaque-{len(self.opaque) + 1}"
        self.opaque[token] = answer
        return token

    def _documents(self) -> dict[str, Any]:
        metadata = {
            "issuer": self.metadata_issuer,
            "jwks_uri": f"{self.url}/jwks.json",
            "introspection_endpoint": f"{self.url}/introspect",
            "response_types_supported": ["code"],
        }
        origin = self.url[: len(self.url) - len(self.path)] if self.path else self.url
        well_known = "/.well-known/oauth-authorization-server" + self.path
        return {
            urllib.parse.urlsplit(origin + well_known).path: metadata,
            self.path + "/jwks.json": {"keys": [k.as_dict(private=False) for k in self.keys]},
        }

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        self.fetches[path] = self.fetches.get(path, 0) + 1
        status, document = 404, {"error": "not found"}
        if path == self.path + "/introspect" and scope["method"] == "POST":
            body = b""
            while True:
                message = await receive()
                body += message.get("body", b"")
                if not message.get("more_body"):
                    break
            form = urllib.parse.parse_qs(body.decode())
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.introspection_auth.append(headers.get("authorization"))
            token = form.get("token", [""])[0]
            status = self.introspection_status
            document = self.opaque.get(token, {"active": False})
        elif scope["method"] == "GET" and path in self._documents():
            status, document = 200, self._documents()[path]
        body = json.dumps(document).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})


def basic(client_id: str, secret: str) -> str:
    """client_secret_basic as RFC 6749 section 2.3.1 spells it: form-encoded, then Basic."""
    pair = f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(secret)}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


@contextlib.contextmanager
def serving(app: Any, port: int) -> Iterator[None]:
    """Serve an ASGI app on a loopback port in a thread for the duration of the block."""
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the issuer did not start")
        time.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)
