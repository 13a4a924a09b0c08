"""The MCP server as its clients' authorization server, signing users in at a provider
that lets no client register (GitHub, Google, Entra, ...): ``OAuthProxy`` (and
``snodo.auth.oidc.OIDCProxy`` over it for OpenID providers).

Theory of operation. The proxy is a ``ProtectedResource`` whose authorization server is
the server itself (``base_url``), with the endpoints of one beside the MCP endpoint
(``endpoint_paths``, answered by the HTTP app before its own checks):

- RFC 8414 metadata, RFC 7591 registration and client-id metadata documents
  (``snodo.auth.proxy_clients``, fetched as ``snodo.auth.proxy_documents`` allows);
- ``/authorize``: a code flow with PKCE S256 only, the RFC 8707 ``resource`` this
  server's, the redirect URI exactly one registered. The user is asked first, on a
  consent page naming the client and where it will be sent back (against a confused
  deputy: the proxy's single registration at the provider must not let any client
  ride on an earlier sign-in). The answer is remembered per browser and client in a
  signed cookie; until then an error is shown, never sent to a redirect URI that anyone
  may have registered (the server would redirect anywhere on a stranger's link);
- the provider leg: the user goes to the provider with the server's own redirect URI
  (``{base_url}/auth/callback``), state and PKCE; the sign-in is bound to the browser
  that consented by a cookie, so a provider link handed to someone else leads nowhere.
  At the callback the provider's code is exchanged, ``verify`` turns the provider's
  token into the identity's claims, and the client gets a code of the proxy's own;
- ``/token`` and ``/revoke`` (``snodo.auth.proxy_grants``): the proxy's own tokens
  (``snodo.auth.proxy_tokens``), which are what the MCP endpoint accepts.

The provider's tokens never leave the server: sealed in the store with the grant. The
store (``snodo.auth.proxy_store``) and the ``secret`` are what workers must share.

Beside the code flow: DPoP (``snodo.auth.dpop``), ID-JAGs (``snodo.auth.id_jag``),
first-party clients (``snodo.auth.first_party``) and token exchange for handlers.
"""

from __future__ import annotations

import logging
import os
import secrets
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.dpop import DPoP
from snodo.auth.exchange import TokenExchange
from snodo.auth.first_party import FirstPartyClient
from snodo.auth.id_jag import IdentityAssertions
from snodo.auth.protected import Answer, EndpointRequest, ProtectedResource
from snodo.auth.proxy_clients import Clients, Records, server_metadata
from snodo.auth.proxy_consent import Consent
from snodo.auth.proxy_grants import Grants, s256
from snodo.auth.proxy_limits import SIGN_IN_TTL, ProxyLimits
from snodo.auth.proxy_pages import (
    PREFLIGHT,
    BadForm,
    OAuthRefusal,
    Signer,
    cookie,
    json_answer,
    parse_form,
    read_cookie,
    readable_anywhere,
    redirect,
    with_query,
)
from snodo.auth.proxy_store import (
    DefaultStore,
    MemoryProxyStore,
    ProxyStore,
    Vault,
    derive,
    digest,
)
from snodo.auth.proxy_tokens import TokenMinter
from snodo.auth.proxy_upstream import exchange
from snodo.auth.tokens import AccessToken, canonical_resource

REDIS_ENV = "SNODO_REDIS"
"""The deployment's Redis URL: the store of a proxy given none (snodo.server.shared_stores)."""


def default_store() -> DefaultStore:
    """A proxy's store when given none: Redis's at ``SNODO_REDIS``, else this process's
    memory, until ``Server(redis=URL)`` names another (``DefaultStore``)."""
    url = os.environ.get(REDIS_ENV)
    if url:
        from snodo.auth.proxy_store import RedisProxyStore  # noqa: PLC0415 - the redis extra

        return DefaultStore(RedisProxyStore(url))
    return DefaultStore(MemoryProxyStore())


__all__ = ["OAuthProxy", "Verify"]

log = logging.getLogger("snodo.auth")

Verify = Callable[[str, httpx.AsyncClient], Awaitable[Mapping[str, Any]]]
"""The provider's access token (and an HTTP client) to the identity's claims, ``sub``
among them; raise to refuse the sign-in."""

AS_WELL_KNOWN = "/.well-known/oauth-authorization-server"
CODE_TTL = 300.0


class OAuthProxy(ProtectedResource):
    """Sign MCP clients in through a plain OAuth provider; pass as ``Server(authorization=...)``.

    ``authorize_url``/``token_url``, ``client_id``/``client_secret`` and ``scopes``
    are the provider's and the one registration there, whose redirect URI is
    ``{base_url}/auth/callback``. ``verify`` turns the provider's access token into
    the identity's claims. ``base_url`` is where the server is reached (its issuer);
    ``resource`` the MCP endpoint, ``{base_url}/mcp`` unless given. ``secret`` signs
    and seals (``SNODO_AUTH_SECRET`` unless given; workers must share it, as they
    share ``store``: given none, Redis's at ``SNODO_REDIS``, else this process's
    memory). ``limits`` bounds what strangers may leave in the store
    (``ProxyLimits``); ``loopback_documents``, for development only, lets client-id
    metadata documents come from this machine. ``dpop`` (a ``DPoP``, True: the store's
    and secret's) binds tokens to keys clients prove; ``identity_assertion`` takes
    ID-JAGs; listed ``first_party_clients`` skip consent; ``token_exchange`` serves
    ``ctx.exchange_token`` with the provider's token. The rest are the resource's.
    """

    def __init__(
        self,
        *,
        authorize_url: str,
        token_url: str,
        client_id: str,
        client_secret: str,
        base_url: str,
        scopes: Iterable[str] = (),
        verify: Verify,
        resource: str | None = None,
        store: ProxyStore | None = None,
        secret: bytes | str | None = None,
        token_auth: Literal["client_secret_post", "client_secret_basic"] = "client_secret_post",
        authorize_params: Mapping[str, str] | None = None,
        access_lifetime: float = 900.0,
        refresh_lifetime: float = 30 * 86400.0,
        consent_lifetime: float = 30 * 86400.0,
        scopes_supported: Iterable[str] = (),
        required_scopes: Iterable[str] = (),
        implied_scopes: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        limits: ProxyLimits | None = None,
        loopback_documents: bool = False,
        dpop: DPoP | bool = True,
        identity_assertion: IdentityAssertions | None = None,
        first_party_clients: Iterable[FirstPartyClient] = (),
        token_exchange: TokenExchange | None = None,
    ) -> None:
        base = base_url.rstrip("/")
        resource = resource or base + "/mcp"
        key = secret if secret is not None else os.environ.get("SNODO_AUTH_SECRET")
        self.own_secret = key is None
        """No secret: a key of this process, which another worker cannot share."""
        key = os.urandom(32) if key is None else key.encode() if isinstance(key, str) else key
        if len(key) < 16:
            raise ValueError("the proxy's secret must be at least 16 bytes")
        self.store: ProxyStore = store if store is not None else default_store()
        self.minter = TokenMinter(key, base, resource, self.store, lifetime=access_lifetime)
        proofs = DPoP.in_proxy(dpop, self.store, derive(key, "dpop"))
        super().__init__(
            resource,
            [base],
            self.minter,
            scopes_supported=scopes_supported,
            required_scopes=required_scopes,
            implied_scopes=implied_scopes,
            resource_name=resource_name,
            resource_documentation=resource_documentation,
            dpop=proofs,
            token_exchange=token_exchange,
        )
        self.base_url = base
        self.authorize_url = authorize_url
        self.token_url = token_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(scopes)
        self.verify_identity = verify
        self.token_auth = token_auth
        self.authorize_params = dict(authorize_params or {})
        self.records = Records(self.store, Vault(key))
        self.signer = Signer(derive(key, "cookies"))
        self.limits = limits or ProxyLimits()
        self.clients = Clients(self.records, self.limits, loopback_documents)
        self.grants = Grants(
            self.records,
            self.clients,
            self.minter,
            refresh_lifetime=refresh_lifetime,
            token_endpoint=base + "/token",
            dpop=proofs,
            assertions=identity_assertion,
            scopes_supported=self.scopes_supported,
        )
        self.clients.grant_types = self.grants.types
        self.clients.first_party = {c.client_id: c.client() for c in first_party_clients}
        parts = urllib.parse.urlsplit(base)
        self.secure = parts.scheme == "https"
        self.base_path = parts.path
        self.callback_url = base + "/auth/callback"
        self.consent = Consent(
            self.signer,
            server=resource_name or parts.netloc,
            resource=self.resource,
            action=base + "/consent",
            path=parts.path,
            secure=self.secure,
            lifetime=consent_lifetime,
            first_party=self.clients.first_party,
        )
        self._routes: dict[str, Callable[[EndpointRequest], Awaitable[Answer]]] = {
            AS_WELL_KNOWN + parts.path: self._metadata,
            parts.path + "/authorize": self._authorize,
            parts.path + "/consent": self._consent,
            parts.path + "/auth/callback": self._callback,
            parts.path + "/token": self.grants.token,
            parts.path + "/register": self._register,
            parts.path + "/revoke": self.grants.revoke,
        }
        self.endpoint_paths = frozenset(self._routes)
        self._public = frozenset(self._routes) - {
            parts.path + "/authorize",
            parts.path + "/consent",
            parts.path + "/auth/callback",
        }
        """What browser-based clients call from their own origin (CORS)."""

    # -- plumbing -----------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        """A new HTTP client to the provider, closed after the sign-in: a sign-in is
        rare, and nothing is left open when the server stops."""
        return httpx.AsyncClient(timeout=10.0, follow_redirects=False)

    async def endpoint(self, request: EndpointRequest) -> Answer:
        """The answer of one of the proxy's endpoints; every refusal an OAuth error."""
        route = self._routes.get(request.path)
        if route is None:
            return await super().endpoint(request)
        public = request.path in self._public
        if public and request.method == "OPTIONS":
            return PREFLIGHT
        try:
            answer = await route(request)
        except OAuthRefusal as refusal:
            log.info("refused at %s: %s", request.path, refusal.error)
            answer = refusal.answer
        return readable_anywhere(answer) if public else answer

    def unshared(self) -> str | None:
        """A memory store, or a key made for this process."""
        kept = self.store.inner if isinstance(self.store, DefaultStore) else self.store
        if isinstance(kept, MemoryProxyStore):
            return "keeps sign-ins in this process's memory (store=)"
        return (
            "signs with a key of this process (secret=)" if self.own_secret else super().unshared()
        )

    async def provider_endpoints(self) -> tuple[str, str]:
        """The provider's authorization and token endpoints."""
        return self.authorize_url, self.token_url

    def provider_params(self, sign_in: Mapping[str, Any]) -> dict[str, str]:
        """What else the user is sent to the provider with (OpenID: the nonce)."""
        return {}

    async def check_response(self, query: Mapping[str, str]) -> None:
        """Refuse the provider's answer at the callback (OpenID: its ``iss``)."""

    async def identity(
        self, tokens: Mapping[str, Any], sign_in: Mapping[str, Any], http: httpx.AsyncClient
    ) -> Mapping[str, Any]:
        """The claims of who signed in, from the provider's tokens: ``verify``'s."""
        return await self.verify_identity(tokens["access_token"], http)

    # -- metadata and registration --------------------------------------------------------

    def server_metadata(self) -> dict[str, Any]:
        """The authorization server metadata (RFC 8414 section 2)."""
        return {**server_metadata(self.base_url, self.scopes_supported), **self.grants.metadata()}

    async def subject_token(self, presented: str, token: AccessToken) -> str:
        """What ``ctx.exchange_token`` trades: the provider's token held for the caller."""
        return await self.grants.upstream_token(token.claims)

    async def _metadata(self, request: EndpointRequest) -> Answer:
        if request.method != "GET":
            return Answer(405, ((b"allow", b"GET"),), b'{"error":"method not allowed"}')
        return json_answer(200, self.server_metadata())

    async def _register(self, request: EndpointRequest) -> Answer:
        if request.method != "POST":
            raise OAuthRefusal("invalid_request", "use POST", 405)
        await self.limits.admit_registration(self.store, request.address)
        return await self.clients.register(request.body)

    # -- the authorization request ------------------------------------------------------

    async def _authorize(self, request: EndpointRequest) -> Answer:
        try:
            query = parse_form(request.query)
        except BadForm as exc:
            raise OAuthRefusal("invalid_request", str(exc)) from None
        client_id = query.get("client_id", "")
        client = await self.clients.find(client_id, request.address)
        if client is None:
            raise OAuthRefusal("invalid_client", "unknown client_id")
        redirect_uri = query.get("redirect_uri")
        if redirect_uri is None and len(client.redirect_uris) == 1:
            redirect_uri = client.redirect_uris[0]
        if redirect_uri not in client.redirect_uris:
            # Never redirect to an address the client did not register.
            raise OAuthRefusal("invalid_request", "redirect_uri is not registered for this client")
        state = query.get("state")
        # Trusted: the operator's first-party client, or one this browser's user allowed.
        trusted = self.consent.given(request.headers, client.client_id)

        def back(error: str, description: str, status: int = 400) -> Answer:
            # Only a client this browser's user allowed is sent its errors: for any other,
            # a stranger's link would be sent on with no step of the user's (RFC 9700 4.11.2).
            if not trusted:
                raise OAuthRefusal(error, description, status)
            return redirect(self._back(redirect_uri, state, error=error, description=description))

        if query.get("response_type") != "code":
            return back("unsupported_response_type", "only response_type=code is supported")
        challenge = query.get("code_challenge", "")
        if query.get("code_challenge_method") != "S256" or len(challenge) != 43:
            return back("invalid_request", "PKCE with code_challenge_method=S256 is required")
        resource = query.get("resource")
        if resource is not None and canonical_resource(resource) != canonical_resource(
            self.resource
        ):
            return back("invalid_target", f"this server's resource is {self.resource}")
        asked = query.get("scope", "").split()
        supported = set(self.scopes_supported)
        scopes = [s for s in asked if s in supported] if asked else sorted(supported)
        try:
            await self.limits.admit_sign_in(self.store, request.address)
        except OAuthRefusal as refusal:
            return back(refusal.error, refusal.description, refusal.status)
        txn = secrets.token_urlsafe(24)
        sign_in = {
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "challenge": challenge,
            "state": state,
            "scopes": scopes,
            "verifier": secrets.token_urlsafe(48),
            "nonce": secrets.token_urlsafe(24),
        }
        await self.records.put("sign-in:" + txn, sign_in, SIGN_IN_TTL)
        if trusted:
            return await self._to_provider(txn, sign_in, ())
        return self.consent.page(request.headers, client, txn, redirect_uri, scopes)

    async def _consent(self, request: EndpointRequest) -> Answer:
        """The consent form's answer (``snodo.auth.proxy_consent``)."""
        txn, allowed = self.consent.answered(request)
        if not allowed:
            sign_in = await self.records.take("sign-in:" + txn)
            if sign_in is None:
                raise OAuthRefusal("invalid_request", "the sign-in expired; start again")
            url = self._back(
                sign_in["redirect_uri"],
                sign_in["state"],
                error="access_denied",
                description="the user did not allow this client",
            )
            return redirect(url)
        sign_in = await self.records.get("sign-in:" + txn)
        if sign_in is None:
            raise OAuthRefusal("invalid_request", "the sign-in expired; start again")
        consent = self.consent.remember(request.headers, sign_in["client_id"])
        return await self._to_provider(txn, sign_in, (consent,))

    def _flow_cookie(self, txn: str) -> str:
        return "snodo_flow_" + digest(txn)[:12]

    async def _to_provider(
        self, txn: str, sign_in: Mapping[str, Any], cookies: Iterable[bytes]
    ) -> Answer:
        """Off to the provider, this browser marked as the one that consented."""
        authorize_url, _ = await self.provider_endpoints()
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.callback_url,
            "state": txn,
            "code_challenge": s256(sign_in["verifier"]),
            "code_challenge_method": "S256",
            "scope": " ".join(self.scopes) or None,
            **self.provider_params(sign_in),
            **self.authorize_params,
        }
        flow = cookie(
            self._flow_cookie(txn),
            self.signer.mac("flow", txn),
            path=self.base_path or "/",
            secure=self.secure,
            max_age=int(SIGN_IN_TTL),
        )
        return redirect(with_query(authorize_url, params), (*cookies, flow))

    def _back(
        self,
        redirect_uri: str,
        state: str | None,
        *,
        code: str | None = None,
        error: str | None = None,
        description: str | None = None,
    ) -> str:
        """The client's redirect URI with the answer, and ``iss`` (RFC 9207)."""
        params = {"code": code, "error": error, "error_description": description}
        return with_query(redirect_uri, {**params, "state": state, "iss": self.base_url})

    # -- the provider's answer ----------------------------------------------------------

    async def _callback(self, request: EndpointRequest) -> Answer:
        try:
            query = parse_form(request.query)
        except BadForm as exc:
            raise OAuthRefusal("invalid_request", str(exc)) from None
        txn = query.get("state", "")
        # The browser first: a callback opened in another one must not spend the sign-in.
        mark = read_cookie(request.headers, self._flow_cookie(txn)) or ""
        if not txn or not self.signer.matches("flow", txn, mark):
            raise OAuthRefusal("access_denied", "this sign-in was not begun in this browser")
        sign_in = await self.records.take("sign-in:" + txn)
        if sign_in is None:
            raise OAuthRefusal("invalid_request", "unknown or expired sign-in")
        redirect_uri, state = sign_in["redirect_uri"], sign_in["state"]
        done = cookie(
            self._flow_cookie(txn), "", path=self.base_path or "/", secure=self.secure, max_age=0
        )
        try:
            await self.check_response(query)
        except OAuthRefusal as refusal:
            log.warning("the provider's answer was refused: %s", refusal.description)
            url = self._back(
                redirect_uri, state, error=refusal.error, description=refusal.description
            )
            return redirect(url, (done,))
        if "code" not in query:
            url = self._back(
                redirect_uri,
                state,
                error="access_denied",
                description="the identity provider did not sign the user in",
            )
            return redirect(url, (done,))
        error = "access_denied"
        description = "the identity provider's sign-in could not be completed"
        try:
            async with self._http() as http:
                _, token_url = await self.provider_endpoints()
                tokens = await exchange(
                    http,
                    token_url,
                    client_id=self.client_id,
                    client_secret=self.client_secret,
                    token_auth=self.token_auth,
                    redirect_uri=self.callback_url,
                    code=query["code"],
                    verifier=sign_in["verifier"],
                )
                claims = dict(await self.identity(tokens, sign_in, http))
        except OAuthRefusal as refusal:
            log.warning("sign-in at the identity provider refused: %s", refusal.description)
            error, description = refusal.error, refusal.description
            claims = {}
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            log.warning("sign-in at the identity provider failed: %s", type(exc).__name__)
            claims = {}
        if not claims:
            url = self._back(redirect_uri, state, error=error, description=description)
            return redirect(url, (done,))
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            log.warning("the identity provider named no subject")
            url = self._back(redirect_uri, state, error="access_denied", description="no identity")
            return redirect(url, (done,))
        code = secrets.token_urlsafe(32)
        record = {
            "client_id": sign_in["client_id"],
            "redirect_uri": redirect_uri,
            "challenge": sign_in["challenge"],
            "scopes": sign_in["scopes"],
            "claims": claims,
            "upstream": {k: tokens[k] for k in tokens if k != "id_token"},
        }
        await self.records.put("code:" + digest(code), record, CODE_TTL)
        return redirect(self._back(redirect_uri, state, code=code), (done,))
