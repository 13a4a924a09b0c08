"""A loopback OpenID provider with no registration endpoint, for the proxy's tests.

It knows one client (the proxy's registration), signs every request in as one user
without a page, checks PKCE and the client's secret at its token endpoint, and issues
access tokens that are JWTs of its own key: a token a client could try to pass to the
MCP server. ``issued`` keeps what it handed out, so tests can look for it in logs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
import urllib.parse
from typing import Any

from joserfc import jwt
from joserfc.jwk import ECKey

CLIENT_ID = "the-proxy"
CLIENT_SECRET = "proxy secret/with:odd chars"
USER = {"sub": "user-42", "email": "ada@example.com", "name": "Ada Lovelace"}


class Provider:
    def __init__(self, url: str, callback: str) -> None:
        self.url = url
        self.callback = callback
        self.key = ECKey.generate_key("P-256", {"kid": "idp-1"})
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}
        self.issued: list[str] = []
        """Every access and refresh token handed to the proxy."""
        self.authorizations: list[dict[str, str]] = []
        self.deny = False
        """Answer the next sign-ins with access_denied."""

    def configuration(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
        }

    def _authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        self.authorizations.append(query)
        if query.get("client_id") != CLIENT_ID or query.get("redirect_uri") != self.callback:
            return 400, {}, b'{"error":"invalid_request"}'
        if self.deny:
            params = {"error": "access_denied", "state": query.get("state", "")}
        else:
            code = secrets.token_urlsafe(16)
            self.codes[code] = query
            params = {"code": code, "state": query.get("state", "")}
        return 302, {"location": f"{self.callback}?{urllib.parse.urlencode(params)}"}, b""

    def _token(self, form: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if form.get("client_id") != CLIENT_ID or form.get("client_secret") != CLIENT_SECRET:
            return 401, {}, b'{"error":"invalid_client"}'
        asked = self.codes.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "").encode()
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        if (
            asked is None
            or asked.get("code_challenge", "").encode() != challenge
            or form.get("redirect_uri") != self.callback
        ):
            return 400, {}, b'{"error":"invalid_grant"}'
        now = int(time.time())
        claims = {**USER, "iss": self.url, "aud": CLIENT_ID, "iat": now, "exp": now + 3600}
        access = jwt.encode({"alg": "ES256", "kid": "idp-1"}, claims, self.key)
        refresh = secrets.token_urlsafe(24)
        self.tokens[access] = USER
        self.issued += [access, refresh]
        answer = {
            "access_token": access,
            "refresh_token": refresh,
            "token_type": "Bearer",
            "expires_in": 3600,
        }
        return 200, {}, json.dumps(answer).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path, method = scope["path"], scope["method"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        query = dict(urllib.parse.parse_qsl(scope["query_string"].decode()))
        status, extra, answer = 404, {}, b'{"error":"not found"}'
        if path == "/.well-known/openid-configuration" and method == "GET":
            status, answer = 200, json.dumps(self.configuration()).encode()
        elif path == "/authorize" and method == "GET":
            status, extra, answer = self._authorize(query)
        elif path == "/token" and method == "POST":
            status, extra, answer = self._token(dict(urllib.parse.parse_qsl(body.decode())))
        elif path == "/userinfo" and method == "GET":
            token = headers.get("authorization", "").removeprefix("Bearer ")
            user = self.tokens.get(token)
            status, answer = (200, json.dumps(user).encode()) if user else (401, b"{}")
        raw = [(b"content-type", b"application/json")]
        raw += [(k.encode(), v.encode()) for k, v in extra.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": answer})
