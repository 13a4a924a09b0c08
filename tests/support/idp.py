"""A loopback OpenID provider with no registration endpoint, and a test user who signs in.

``Provider`` is what the big identity providers look like to a server that signs users
in through them: discovery (OpenID Connect and RFC 8414), a JWKS, ``/authorize`` with
a login page a person approves or cancels, code + PKCE S256 + state, ``/token`` for
confidential clients (``client_secret_basic``, ``client_secret_post`` and
``private_key_jwt``, RFC 7523) with the authorization code, refresh token and client
credentials grants, an ``id_token`` and a JWT access token, and ``/userinfo``. As an
enterprise identity provider it also does token exchange (RFC 8693) for a client
registered with that grant: an ID token it issued to that client for an ID-JAG (naming
the client's ``jag_client_id``), and an access token of its own for one to another
audience (on behalf of its subject), recording each in ``exchanges``. It takes a
workload's identity token with the ``jwt-bearer`` grant (RFC 7523) when the platform
that signed it is trusted (``trust_workloads``), for a client registered with that
grant, which needs no secret. Clients
are registered by the test (``add_client``), never over the wire: the provider has no
registration endpoint, which is the point. Knobs: ``deny_login`` (the person's
sign-in fails), ``requests`` (count per path), ``rotate()`` (a new signing key),
``user`` (the claims of the one test user), ``token_lifetime``; for a provider that
answers wrong, ``id_token_claims`` (merged over its ID token's, None removing one),
``id_token_key`` (signs the ID token instead of a published key), ``userinfo_claims``
(merged over what userinfo answers), ``answer_iss`` (the ``iss`` its answers name:
None for none) and ``jwks_down`` (its key set answers 503).

``TestUser`` is the person at the browser: it follows redirects across the provider's
and an MCP server's pages, keeps cookies, and submits the forms it meets, approving or
cancelling. It is a ``snodo.oauth`` ``UserAgent`` (``authorize``) and a browser opener
(``open``, for ``BrowserUserAgent(open_page=...)``), and ``python -m tests.support.idp
URL [--deny]`` makes it a ``BROWSER`` command for programs that open a browser.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import html
import json
import secrets
import socket
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import httpx
import uvicorn
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, RSAKey

CLIENT_ID = "mcp-server"
"""The client id the MCP server holds at the provider (registered by hand, as in a console)."""
CLIENT_SECRET = "provider secret:with/odd chars"

USER: dict[str, Any] = {
    "sub": "248289761001",
    "email": "ada@example.org",
    "email_verified": True,
    "name": "Ada Lovelace",
}

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier`` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class ProviderClient:
    """A client registered at the provider by its operator."""

    client_id: str
    secret: str | None = None
    redirect_uris: list[str] = field(default_factory=list)
    keys: KeySet | None = None
    """Public keys for ``private_key_jwt``; a client with keys authenticates only so."""
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    jag_client_id: str | None = None
    """The client's id at MCP authorization servers, which its ID-JAGs name."""


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str | None
    scope: str
    nonce: str | None
    resource: str | None
    used: bool = False


class OAuthRefusal(Exception):
    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


class Provider:
    """The provider as an ASGI app; ``url`` is set when served (``serve_provider``)."""

    def __init__(self, *, alg: str = "RS256") -> None:
        self.alg = alg
        self.url = ""
        self.keys: list[RSAKey | ECKey] = [self._new_key("key-1")]
        self.clients: dict[str, ProviderClient] = {}
        self.user: dict[str, Any] = dict(USER)
        self.deny_login = False
        self.token_lifetime = 300
        self.id_token_claims: dict[str, Any] = {}
        self.id_token_key: RSAKey | ECKey | None = None
        self.userinfo_claims: dict[str, Any] = {}
        self.answer_iss: str | None = ""
        """"": its issuer; None: no ``iss``; else the issuer its answers name."""
        self.jwks_down = False
        self.requests: Counter[str] = Counter()
        self.token_requests: list[tuple[dict[str, str], str | None]] = []
        """(form, Authorization header) of every token request, as it arrived."""
        self.assertions: list[tuple[dict[str, Any], dict[str, Any]]] = []
        """(header, claims) of every client assertion accepted."""
        self.exchanges: list[dict[str, str]] = []
        """The form of every token exchange granted."""
        self.workload_issuers: dict[str, KeySet] = {}
        """Platforms whose workload tokens the jwt-bearer grant takes, by issuer."""
        self._pending: dict[str, dict[str, str]] = {}
        self._codes: dict[str, _Code] = {}
        self._refresh: dict[str, tuple[str, str, str | None]] = {}
        """refresh token -> (client id, scope, resource)"""
        self._jtis: set[str] = set()
        self._lock = threading.Lock()

    # -- what tests set and read ---------------------------------------------------------

    def _new_key(self, kid: str) -> RSAKey | ECKey:
        if self.alg == "ES256":
            return ECKey.generate_key("P-256", {"kid": kid, "alg": "ES256", "use": "sig"})
        return RSAKey.generate_key(2048, {"kid": kid, "alg": self.alg, "use": "sig"})

    def rotate(self) -> None:
        """Sign with a new key from now on; the old ones stay published."""
        self.keys.insert(0, self._new_key(f"key-{len(self.keys) + 1}"))

    def add_client(
        self,
        client_id: str = CLIENT_ID,
        secret: str | None = CLIENT_SECRET,
        redirect_uris: list[str] | tuple[str, ...] = (),
        *,
        keys: KeySet | None = None,
        grant_types: tuple[str, ...] = ("authorization_code", "refresh_token"),
        jag_client_id: str | None = None,
    ) -> ProviderClient:
        client = ProviderClient(
            client_id, secret, list(redirect_uris), keys, grant_types, jag_client_id
        )
        self.clients[client_id] = client
        return client

    @property
    def issuer(self) -> str:
        return self.url

    @property
    def config_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    @property
    def token_endpoint(self) -> str:
        return f"{self.url}/token"

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": self.token_endpoint,
            "userinfo_endpoint": f"{self.url}/userinfo",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [self.alg],
            "scopes_supported": ["openid", "email", "profile", "offline_access"],
            "grant_types_supported": [
                "authorization_code",
                "refresh_token",
                "client_credentials",
                TOKEN_EXCHANGE,
                JWT_BEARER,
            ],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic",
                "client_secret_post",
                "private_key_jwt",
            ],
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
            "claims_supported": ["sub", "email", "email_verified", "name"],
            "authorization_response_iss_parameter_supported": True,
        }

    def sign(
        self, claims: dict[str, Any], key: RSAKey | ECKey | None = None, typ: str = "JWT"
    ) -> str:
        signer = key or self.keys[0]
        return jwt.encode({"alg": self.alg, "kid": signer.kid, "typ": typ}, claims, signer)

    def id_token(self, client_id: str, **extra: Any) -> str:
        """An ID token of the test user's, as its sign-in at ``client_id`` would give."""
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": client_id, "iat": now, "exp": now + 300}
        return self.sign({**claims, **self.user, **extra})

    def id_jag(self, client_id: str, audience: str, resource: str | None, **extra: Any) -> str:
        """An ID-JAG for the test user (ext-auth section 4.3): ``extra`` over its claims,
        ``typ=`` its header's."""
        now = int(time.time())
        typ = str(extra.pop("typ", "oauth-id-jag+jwt"))
        claims = {
            "iss": self.issuer,
            "sub": self.user["sub"],
            "aud": audience,
            "resource": resource,
            "client_id": client_id,
            "jti": secrets.token_urlsafe(16),
            "iat": now,
            "exp": now + 300,
            "email": self.user["email"],
            **extra,
        }
        return self.sign({k: v for k, v in claims.items() if v is not None}, typ=typ)

    def mint_access_token(self, audience: str = CLIENT_ID, **extra: Any) -> str:
        """An access token of the provider's own, as a client would hold one."""
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": self.user["sub"],
            "aud": audience,
            "client_id": audience,
            "scope": "openid email profile",
            "iat": now,
            "exp": now + self.token_lifetime,
            "jti": secrets.token_urlsafe(12),
            **extra,
        }
        return self.sign(claims)

    # -- HTTP -------------------------------------------------------------------------------

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        self.requests[path] += 1
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode()))
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        form = dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))
        try:
            status, extra, content, kind = self._route(path, method, headers, query, form)
        except OAuthRefusal as refusal:
            status, extra, kind = refusal.status, [], "application/json"
            answer = {"error": refusal.error, "error_description": refusal.description}
            content = json.dumps(answer).encode()
            if refusal.error == "invalid_client":
                extra = [("www-authenticate", 'Basic realm="provider"')]
        response_headers = [(b"content-type", kind.encode()), (b"cache-control", b"no-store")]
        response_headers += [(k.encode(), v.encode()) for k, v in extra]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": content})

    def _route(
        self,
        path: str,
        method: str,
        headers: dict[str, str],
        query: dict[str, str],
        form: dict[str, str],
    ) -> tuple[int, list[tuple[str, str]], bytes, str]:
        if method == "GET" and path in (
            "/.well-known/openid-configuration",
            "/.well-known/oauth-authorization-server",
        ):
            return self._json(self.metadata())
        if method == "GET" and path == "/jwks" and self.jwks_down:
            return 503, [], b"down", "text/plain"
        if method == "GET" and path == "/jwks":
            return self._json({"keys": [k.as_dict(private=False) for k in self.keys]})
        if method == "GET" and path == "/authorize":
            return self._authorize(query)
        if method == "POST" and path == "/login":
            return self._login(form)
        if method == "POST" and path == "/token":
            with self._lock:
                self.token_requests.append((form, headers.get("authorization")))
                return self._json(self._token(headers, form))
        if path == "/userinfo" and method in ("GET", "POST"):
            return self._userinfo(headers)
        return 404, [], b"not found", "text/plain"

    @staticmethod
    def _json(document: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes, str]:
        return 200, [], json.dumps(document).encode(), "application/json"

    @staticmethod
    def _page(status: int, text: str) -> tuple[int, list[tuple[str, str]], bytes, str]:
        return status, [], text.encode(), "text/html; charset=utf-8"

    def _back(
        self, redirect_uri: str, **params: str
    ) -> tuple[int, list[tuple[str, str]], bytes, str]:
        if self.answer_iss is not None:
            params["iss"] = self.answer_iss or self.issuer
        separator = "&" if urllib.parse.urlsplit(redirect_uri).query else "?"
        location = redirect_uri + separator + urllib.parse.urlencode(params)
        return 302, [("location", location)], b"", "text/plain"

    def _authorize(self, query: dict[str, str]) -> tuple[int, list[tuple[str, str]], bytes, str]:
        client = self.clients.get(query.get("client_id", ""))
        redirect_uri = query.get("redirect_uri", "")
        # An unknown client or redirect URI is told to the person, never redirected to
        # (RFC 6749 §4.1.2.1).
        if client is None:
            return self._page(400, "<p>Unknown client.</p>")
        if redirect_uri not in client.redirect_uris:
            return self._page(400, "<p>The redirect URI is not registered for this client.</p>")
        state = {"state": query["state"]} if "state" in query else {}
        if query.get("response_type") != "code":
            return self._back(redirect_uri, error="unsupported_response_type", **state)
        if "code_challenge" in query and query.get("code_challenge_method") != "S256":
            return self._back(
                redirect_uri,
                error="invalid_request",
                error_description="only S256",
                **state,
            )
        transaction = secrets.token_urlsafe(16)
        self._pending[transaction] = query
        name = html.escape(str(self.user.get("name", "")))
        page = (
            "<!doctype html><title>Sign in</title>"
            f"<p>Sign in to continue to {html.escape(client.client_id)}</p>"
            '<form method="post" action="/login">'
            f'<input type="hidden" name="transaction" value="{transaction}">'
            f'<button type="submit" name="decision" value="approve">Sign in as {name}</button>'
            '<button type="submit" name="decision" value="deny">Cancel</button>'
            "</form>"
        )
        return self._page(200, page)

    def _login(self, form: dict[str, str]) -> tuple[int, list[tuple[str, str]], bytes, str]:
        query = self._pending.pop(form.get("transaction", ""), None)
        if query is None:
            return self._page(400, "<p>This sign-in has expired.</p>")
        state = {"state": query["state"]} if "state" in query else {}
        if form.get("decision") != "approve" or self.deny_login:
            return self._back(
                query["redirect_uri"],
                error="access_denied",
                error_description="the user did not sign in",
                **state,
            )
        code = secrets.token_urlsafe(24)
        self._codes[code] = _Code(
            client_id=query["client_id"],
            redirect_uri=query["redirect_uri"],
            challenge=query.get("code_challenge"),
            scope=query.get("scope", ""),
            nonce=query.get("nonce"),
            resource=query.get("resource"),
        )
        return self._back(query["redirect_uri"], code=code, **state)

    # -- the token endpoint ----------------------------------------------------------------

    def _authenticate(self, headers: dict[str, str], form: dict[str, str]) -> ProviderClient:
        basic = headers.get("authorization", "")
        if basic[:6].lower() == "basic ":
            try:
                pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
                raw_id, _, raw_secret = pair.partition(":")
            except (ValueError, UnicodeDecodeError):
                raise OAuthRefusal("invalid_client", "unreadable Basic credentials", 401) from None
            client_id = urllib.parse.unquote_plus(raw_id)
            secret = urllib.parse.unquote_plus(raw_secret)
            return self._by_secret(client_id, secret)
        if "client_assertion" in form:
            return self._by_assertion(form)
        if "client_secret" in form:
            return self._by_secret(form.get("client_id", ""), form["client_secret"])
        raise OAuthRefusal("invalid_client", "client authentication is required", 401)

    def _by_secret(self, client_id: str, secret: str) -> ProviderClient:
        client = self.clients.get(client_id)
        if client is None or client.secret is None:
            raise OAuthRefusal("invalid_client", "unknown client", 401)
        if not secrets.compare_digest(client.secret.encode(), secret.encode()):
            raise OAuthRefusal("invalid_client", "wrong client secret", 401)
        return client

    def _by_assertion(self, form: dict[str, str]) -> ProviderClient:
        """RFC 7523 §3: signed by a key the client registered, iss = sub = the client,
        aud this token endpoint (or the issuer), an exp to come, a jti never seen."""
        if form.get("client_assertion_type") != ASSERTION_TYPE:
            raise OAuthRefusal("invalid_client", "unsupported client assertion type", 401)
        assertion = form["client_assertion"]
        try:
            claimed = json.loads(_b64(assertion.split(".")[1]))
            client = self.clients.get(str(claimed.get("sub")))
            if client is None or client.keys is None:
                raise OAuthRefusal("invalid_client", "no keys for this client", 401)
            token = jwt.decode(assertion, client.keys)
        except (ValueError, IndexError, JoseError) as exc:
            raise OAuthRefusal("invalid_client", f"bad client assertion: {exc}", 401) from None
        claims = token.claims
        now = time.time()
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if claims.get("iss") != client.client_id or claims.get("sub") != client.client_id:
            raise OAuthRefusal("invalid_client", "iss and sub must be the client id", 401)
        if "client_id" in form and form["client_id"] != client.client_id:
            raise OAuthRefusal("invalid_client", "client_id differs from the assertion", 401)
        if self.token_endpoint not in audiences and self.issuer not in audiences:
            raise OAuthRefusal("invalid_client", "the assertion is for another audience", 401)
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or exp <= now:
            raise OAuthRefusal("invalid_client", "the assertion has expired", 401)
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or jti in self._jtis:
            raise OAuthRefusal("invalid_client", "the assertion's jti is missing or reused", 401)
        self._jtis.add(jti)
        self.assertions.append((dict(token.header), dict(claims)))
        return client

    def trust_workloads(self, issuer: str, keys: KeySet) -> None:
        """Take workload tokens ``issuer`` signs with ``keys`` (a platform's)."""
        self.workload_issuers[issuer] = keys

    def _workload(self, form: dict[str, str]) -> dict[str, Any]:
        """RFC 7523 section 3: a workload token of a trusted platform, for this
        provider, not expired; the token issued names its subject."""
        client = self.clients.get(form.get("client_id", ""))
        if client is None or JWT_BEARER not in client.grant_types:
            raise OAuthRefusal("invalid_client", "unknown client", 401)
        assertion = form.get("assertion", "")
        try:
            issuer = json.loads(_b64(assertion.split(".")[1])).get("iss")
            claims = jwt.decode(assertion, self.workload_issuers[issuer]).claims
        except (ValueError, IndexError, KeyError, JoseError, AttributeError):
            raise OAuthRefusal("invalid_grant", "not a workload token I trust") from None
        audience = claims.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if self.issuer not in audiences and self.token_endpoint not in audiences:
            raise OAuthRefusal("invalid_grant", "the workload token is for another audience")
        if claims.get("exp", 0) <= time.time():
            raise OAuthRefusal("invalid_grant", "the workload token has expired")
        scope, resource = form.get("scope", ""), form.get("resource")
        access = self.mint_access_token(
            resource or client.client_id, sub=claims["sub"], scope=scope, client_id=client.client_id
        )
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.token_lifetime,
            "scope": scope,
        }

    def _token(self, headers: dict[str, str], form: dict[str, str]) -> dict[str, Any]:
        if form.get("grant_type") == JWT_BEARER and "client_secret" not in form:
            return self._workload(form)  # a public client: the assertion is its proof
        client = self._authenticate(headers, form)
        grant = form.get("grant_type", "")
        if grant not in client.grant_types:
            raise OAuthRefusal("unauthorized_client", f"{grant!r} is not allowed for this client")
        if grant == "authorization_code":
            code = self._codes.get(form.get("code", ""))
            if code is None or code.used or code.client_id != client.client_id:
                raise OAuthRefusal("invalid_grant", "unknown or used code")
            code.used = True
            if form.get("redirect_uri") != code.redirect_uri:
                raise OAuthRefusal("invalid_grant", "redirect_uri differs from the request")
            verifier = form.get("code_verifier")
            if (code.challenge is None) != (verifier is None):
                raise OAuthRefusal("invalid_grant", "code_verifier does not fit the request")
            if verifier is not None and s256(verifier) != code.challenge:
                raise OAuthRefusal("invalid_grant", "wrong code_verifier")
            return self._issue(client, code.scope, code.nonce, code.resource, refresh=True)
        if grant == "refresh_token":
            held = self._refresh.pop(form.get("refresh_token", ""), None)
            if held is None or held[0] != client.client_id:
                raise OAuthRefusal("invalid_grant", "unknown refresh token")
            return self._issue(client, held[1], None, held[2], refresh=True)
        if grant == "client_credentials":
            scope, resource = form.get("scope", ""), form.get("resource")
            return self._issue(client, scope, None, resource, refresh=False, machine=True)
        if grant == TOKEN_EXCHANGE:
            return self._exchange(client, form)
        raise OAuthRefusal("unsupported_grant_type", f"{grant!r} is not supported")

    def _exchange(self, client: ProviderClient, form: dict[str, str]) -> dict[str, Any]:
        """RFC 8693: the subject token, one of this provider's, for an ID-JAG (an ID
        token issued to this client) or for an access token to another audience."""
        try:
            claims = jwt.decode(form.get("subject_token", ""), KeySet(list(self.keys))).claims
        except (ValueError, JoseError):
            raise OAuthRefusal("invalid_grant", "the subject token is not one of mine") from None
        if claims.get("iss") != self.issuer or claims.get("exp", 0) <= time.time():
            raise OAuthRefusal("invalid_grant", "the subject token is expired or foreign")
        kind, wanted = form.get("subject_token_type"), form.get("requested_token_type")
        audience, resource = form.get("audience"), form.get("resource")
        if kind == ID_TOKEN_TYPE and wanted == ID_JAG_TYPE:
            if claims.get("aud") != client.client_id:
                raise OAuthRefusal("invalid_grant", "the ID token was issued to another client")
            if not audience or not resource:
                raise OAuthRefusal("invalid_request", "an ID-JAG needs audience and resource")
            self.exchanges.append(form)
            scope = {"scope": form["scope"]} if form.get("scope") else {}
            jag = self.id_jag(client.jag_client_id or client.client_id, audience, resource, **scope)
            return {
                "access_token": jag,
                "issued_token_type": ID_JAG_TYPE,
                "token_type": "N_A",
                "expires_in": 300,
            }
        if kind == ACCESS_TOKEN_TYPE and wanted in (None, ACCESS_TOKEN_TYPE):
            if not audience and not resource:
                raise OAuthRefusal("invalid_target", "name the audience or the resource")
            self.exchanges.append(form)
            scope = form.get("scope") or str(claims.get("scope", ""))
            access = self.mint_access_token(
                audience or str(resource),
                sub=claims["sub"],
                scope=scope,
                client_id=client.client_id,
                act={"sub": client.client_id},
            )
            return {
                "access_token": access,
                "issued_token_type": ACCESS_TOKEN_TYPE,
                "token_type": "Bearer",
                "expires_in": self.token_lifetime,
                "scope": scope,
            }
        raise OAuthRefusal("invalid_request", f"cannot exchange {kind} for {wanted}")

    def _issue(
        self,
        client: ProviderClient,
        scope: str,
        nonce: str | None,
        resource: str | None,
        *,
        refresh: bool,
        machine: bool = False,
    ) -> dict[str, Any]:
        """Tokens for ``client``: the access token's audience is the RFC 8707
        ``resource`` when one was asked for, else the client."""
        now = int(time.time())
        subject = client.client_id if machine else self.user["sub"]
        access = self.mint_access_token(
            resource or client.client_id, sub=subject, scope=scope, client_id=client.client_id
        )
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.token_lifetime,
            "scope": scope,
        }
        if refresh:
            token = secrets.token_urlsafe(24)
            self._refresh[token] = (client.client_id, scope, resource)
            answer["refresh_token"] = token
        if not machine and "openid" in scope.split():
            claims = {
                "iss": self.issuer,
                "aud": client.client_id,
                "iat": now,
                "exp": now + self.token_lifetime,
                "auth_time": now,
                **self.user,
            }
            if nonce is not None:
                claims["nonce"] = nonce
            claims.update(self.id_token_claims)
            claims = {k: v for k, v in claims.items() if v is not None}
            answer["id_token"] = self.sign(claims, self.id_token_key)
        return answer

    def _userinfo(self, headers: dict[str, str]) -> tuple[int, list[tuple[str, str]], bytes, str]:
        header = headers.get("authorization", "")
        refused = (401, [("www-authenticate", 'Bearer error="invalid_token"')], b"", "text/plain")
        if header[:7].lower() != "bearer ":
            return refused
        try:
            claims = jwt.decode(header[7:].strip(), KeySet(list(self.keys))).claims
        except (ValueError, JoseError):
            return refused
        if claims.get("iss") != self.issuer or claims.get("exp", 0) <= time.time():
            return refused
        if claims.get("sub") != self.user["sub"]:
            return self._json({"sub": claims.get("sub")})
        return self._json({**self.user, **self.userinfo_claims})


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


@contextlib.contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app from a thread on a free loopback port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("the provider did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextlib.contextmanager
def serve_provider(provider: Provider | None = None) -> Iterator[Provider]:
    """A ``Provider`` (a new one by default) on a free loopback port for the block."""
    provider = provider if provider is not None else Provider()
    with serve_app(provider) as url:
        provider.url = url
        yield provider


# -- the person at the browser ---------------------------------------------------------------

APPROVE_WORDS = ("approve", "allow", "accept", "authorize", "consent", "sign in", "continue", "yes")
DENY_WORDS = ("deny", "cancel", "reject", "decline", "refuse", "no")


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str]
    buttons: list[tuple[str | None, str, str]]
    """(name, value, label) of each submit control."""


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self._button: list[str | None] | None = None  # name, value, label while inside one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), a.get("method", "get").lower(), {}, []))
        elif not self.forms:
            return
        elif tag == "input":
            kind = a.get("type", "text").lower()
            if kind == "submit":
                self.forms[-1].buttons.append(
                    (a.get("name"), a.get("value", ""), a.get("value", ""))
                )
            elif (
                kind not in ("button", "reset", "image")
                and a.get("name")
                and (kind not in ("checkbox", "radio") or "checked" in a)
            ):
                self.forms[-1].fields[a["name"]] = a.get("value", "")
        elif tag == "button" and a.get("type", "submit").lower() == "submit":
            self._button = [a.get("name"), a.get("value", ""), ""]

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self._button[2] = (self._button[2] or "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "button" and self._button is not None and self.forms:
            name, value, label = self._button
            self.forms[-1].buttons.append((name, value or "", (label or "").strip()))
            self._button = None


def _matches(button: tuple[str | None, str, str], words: tuple[str, ...]) -> bool:
    name, value, label = button
    text = " ".join((name or "", value, label)).lower()
    tokens = set(text.replace("_", " ").replace("-", " ").split())
    return any((w in tokens) if " " not in w else (w in text) for w in words)


def choose(forms: list[Form], approve: bool) -> tuple[Form, tuple[str | None, str, str] | None]:
    """The form and submit control a person who ``approve``s (or refuses) would press."""
    for form in forms:
        for button in form.buttons:
            deny = _matches(button, DENY_WORDS)
            if (approve and not deny) or (not approve and deny):
                return form, button
    if approve and forms and not any(form.buttons for form in forms):
        return forms[0], None  # a form with no visible control: submitting it is the way on
    raise AssertionError(f"no control to {'approve' if approve else 'refuse'} on the page")


Decide = Callable[[str, str], bool]
"""(page URL, page text) -> whether the person approves on this page."""


class TestUser:
    """A person at a browser who signs in and approves (or refuses) whatever is asked.

    ``approve`` is one answer for every page, or a ``Decide`` asked per page.
    ``pages`` records every URL requested, ``forms`` every form submitted.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, approve: bool | Decide = True, *, max_steps: int = 20) -> None:
        self.approve = approve
        self.max_steps = max_steps
        self.pages: list[str] = []
        self.forms: list[tuple[str, dict[str, str]]] = []

    def _decide(self, url: str, text: str) -> bool:
        return self.approve(url, text) if callable(self.approve) else self.approve

    async def walk(self, url: str, stop_at: str | None = None) -> str:
        """Follow ``url`` through redirects and forms. Returns the first address that
        starts with ``stop_at`` without requesting it, or (no ``stop_at``) the address of
        the first page that is neither a redirect nor a form."""
        async with httpx.AsyncClient(timeout=30, follow_redirects=False) as http:
            request = http.build_request("GET", url)
            for _ in range(self.max_steps):
                self.pages.append(str(request.url))
                response = await http.send(request)
                location = response.headers.get("location")
                if response.is_redirect and location:
                    target = urllib.parse.urljoin(str(request.url), location)
                    if stop_at is not None and target.startswith(stop_at):
                        return target
                    request = http.build_request("GET", target)
                    continue
                text = response.text
                parser = _Forms()
                parser.feed(text)
                if response.status_code >= 400:
                    raise AssertionError(
                        f"{request.url} answered {response.status_code}: {text[:300]}"
                    )
                if not parser.forms:
                    return str(request.url)
                form, button = choose(parser.forms, self._decide(str(request.url), text))
                fields = dict(form.fields)
                if button is not None and button[0]:
                    fields[button[0]] = button[1]
                action = urllib.parse.urljoin(str(request.url), form.action or str(request.url))
                self.forms.append((action, fields))
                if form.method == "post":
                    request = http.build_request("POST", action, data=fields)
                else:
                    query = urllib.parse.urlencode(fields)
                    request = http.build_request("GET", f"{action.split('?')[0]}?{query}")
        raise AssertionError("too many steps before the sign-in ended")

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        """``snodo.oauth``'s ``UserAgent``: the redirect back, with its code (or error)."""
        return await self.walk(authorization_url, stop_at=redirect_uri)

    def open(self, url: str) -> bool:
        """A browser opener: go all the way, the client's loopback redirect included."""
        asyncio.run(self.walk(url))
        return True


def main(argv: list[str] | None = None) -> int:
    """``BROWSER`` command: ``python -m tests.support.idp URL [--deny]``; with
    ``--stop-at REDIRECT_URI`` it prints the redirect back instead of requesting it
    (for a client program that takes the callback URL itself)."""
    parser = argparse.ArgumentParser(prog="tests.support.idp")
    parser.add_argument("url")
    parser.add_argument("--deny", action="store_true", help="refuse wherever asked")
    parser.add_argument("--stop-at", help="print the first address under this one")
    args = parser.parse_args(argv)
    user = TestUser(approve=not args.deny)
    if args.stop_at:
        print(asyncio.run(user.walk(args.url, stop_at=args.stop_at)), flush=True)
    else:
        user.open(args.url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
