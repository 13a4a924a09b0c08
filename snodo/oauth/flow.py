"""OAuth 2.1 for the HTTP transport, as an ``httpx.Auth``.

Theory of operation. ``OAuth`` sits on the HTTP client the transport already uses, so
the client's request logic never sees authorization. A request goes out with the
stored token (if any), refreshed first when it is about to expire and its authorization
server is already known. A 401 means "no usable token": the flow runs discovery
(``snodo.oauth.discovery``), tries the refresh token when one from the same issuer is
held, and otherwise obtains a new grant; a 403 whose challenge says
``insufficient_scope`` re-authorizes for the union of the scopes held and the scopes
challenged (step-up). Either way the original request is sent again with the new
token. Authorizations per request are bounded (``max_authorizations``), so a server
that never accepts cannot loop the client.

A new grant is the authorization code flow with PKCE (S256) and the RFC 8707
``resource`` on both the authorization and token requests; the user agent
(``snodo.oauth.user_agent``) carries the user to the authorization server and returns
the redirect, which is checked for ``state`` and for ``iss`` (RFC 9207) before the
code is used. The client's identity at that authorization server is, in order: one it
registered there earlier (kept per issuer in the storage), pre-registered
credentials, its Client ID Metadata Document URL when the server accepts those, or a
dynamic registration (RFC 7591). Machine clients use the client credentials grant
instead (a secret, or ``private_key_jwt``: ``snodo.oauth.assertion``), or present an
assertion with the ``jwt-bearer`` grant (``snodo.oauth.jwt_bearer``). With ``dpop=``
tokens are bound to the client's key (``snodo.oauth.dpop``). The OAuth 2.0 mechanics
(authorization URL, token request bodies, PKCE challenge, token endpoint client
authentication) come from authlib.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

try:
    import httpx
    from authlib.common.security import generate_token
    from authlib.oauth2.auth import ClientAuth
    from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
    from authlib.oauth2.rfc7636 import create_s256_code_challenge
except ImportError as exc:  # the base install: say which extra
    raise ImportError("snodo.oauth needs the snodo[auth] extra: pip install 'snodo[auth]'") from exc

from snodo.oauth.assertion import ClientKey
from snodo.oauth.challenge import BearerChallenge, parse_challenge
from snodo.oauth.discovery import Discovery, discover, resource_allowed
from snodo.oauth.dpop import DPoPKey, DPoPSession
from snodo.oauth.errors import OAuthError
from snodo.oauth.jwt_bearer import AssertionSource, bearer_grant
from snodo.oauth.storage import ClientInfo, MemoryTokenStorage, Tokens, TokenStorage
from snodo.oauth.user_agent import UserAgent, check_authorization_url

__all__ = ["OAuth"]

Grant = Literal["authorization_code", "client_credentials", "jwt_bearer"]

# Token endpoint client authentication this client can do, in the order it prefers
# them when registering: a native client holds no secret worth the name.
_REGISTER_METHODS = ("none", "client_secret_basic", "client_secret_post")


def _scopes(value: str | None) -> list[str]:
    return value.split() if value else []


def _union(*groups: list[str]) -> list[str]:
    return list(dict.fromkeys(scope for group in groups for scope in group))


def _for(tokens: Tokens, server_url: str) -> bool:
    """Whether ``tokens`` may be sent to ``server_url``: issued for it (or for no
    resource in particular)."""
    return not tokens.resource or resource_allowed(tokens.resource, server_url)


class OAuth(httpx.Auth):
    """Authorization for ``Client.http(url, auth=OAuth(...))``.

    ``user_agent`` takes the user to the authorization server (required for the
    authorization code grant); ``storage`` keeps tokens and registrations (memory by
    default). Identity: ``client_id``/``client_secret`` for pre-registered
    credentials (``client_key`` in place of the secret: ``private_key_jwt``),
    ``client_metadata_url`` for a Client ID Metadata Document, else
    dynamic registration as ``client_name`` with ``redirect_uri``. ``scope`` is used
    only when neither the challenge nor the resource metadata names scopes.
    ``refresh_tokens`` asks for refresh tokens (``refresh_token`` grant type at
    registration, ``offline_access`` when the authorization server lists it).
    ``lock`` is held around obtaining or refreshing tokens where the storage is shared
    with other processes (``KeptTokens.locked``), so one of them spends a refresh token.
    ``grant="jwt_bearer"`` presents what ``assertion`` gives (``WorkloadIdentity``,
    ``CrossAppAccess``) as ``client_id``; ``dpop`` binds tokens to a ``DPoPKey`` (True:
    a new one) unless the server lists DPoP algorithms without the key's.
    """

    def __init__(
        self,
        *,
        user_agent: UserAgent | None = None,
        storage: TokenStorage | None = None,
        redirect_uri: str = "http://127.0.0.1:8765/callback",
        client_name: str = "snodo-client",
        client_id: str | None = None,
        client_secret: str | None = None,
        client_key: ClientKey | None = None,
        client_metadata_url: str | None = None,
        scope: str | None = None,
        grant: Grant = "authorization_code",
        refresh_tokens: bool = True,
        application_type: str = "native",
        max_authorizations: int = 3,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
        assertion: AssertionSource | None = None,
        dpop: DPoPKey | bool = False,
        lock: Callable[[], AbstractAsyncContextManager[object]] | None = None,
    ) -> None:
        if grant == "client_credentials" and client_id is None:
            raise ValueError("the client credentials grant needs client_id (and a secret or key)")
        if grant == "jwt_bearer" and (client_id is None or assertion is None):
            raise ValueError("the jwt-bearer grant needs client_id and assertion=")
        if client_key is not None and (client_id is None or client_secret is not None):
            raise ValueError("client_key authenticates a client_id, in place of client_secret")
        self.user_agent = user_agent
        self.storage: TokenStorage = storage if storage is not None else MemoryTokenStorage()
        self.redirect_uri = redirect_uri
        self.client_name = client_name
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_key = client_key
        self.client_metadata_url = client_metadata_url
        self.scope = scope
        self.grant: Grant = grant
        self.refresh_tokens = refresh_tokens
        self.application_type = application_type
        self.max_authorizations = max_authorizations
        self.timeout = timeout
        self.transport = transport
        self.assertion = assertion
        self.dpop = DPoPSession(DPoPKey() if dpop is True else dpop or None)
        self._lock = asyncio.Lock()
        self._shared = lock or contextlib.nullcontext
        """Held, inside this process's lock, around obtaining or refreshing tokens: a
        storage that other processes share has them wait for one another."""
        self._found: dict[str, Discovery] = {}
        """The last discovery for each server URL, for refreshing before expiry."""

    # -- the httpx seam -----------------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Any:
        """Refused: the flow awaits storage and the user agent, so it needs an async client."""
        raise RuntimeError("OAuth needs an httpx.AsyncClient")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Send ``request`` with the stored token (refreshed first when about to expire); on
        a 401, or a 403 asking for more scope, authorize and send it again, at most
        ``max_authorizations`` times."""
        server_url = str(request.url.copy_with(query=None, fragment=None))
        tokens = await self.storage.get_tokens()
        if tokens is not None and tokens.refresh_token and tokens.expired():
            tokens = await self._renew(server_url, tokens)
        authorizations = 0
        while True:
            self._present(request, tokens, server_url)
            response = yield request
            if self.dpop.nonce_asked(response.status_code, response.headers, server_url, tokens):
                await response.aread()  # RFC 9449 section 9: once more, with its nonce
                self._present(request, tokens, server_url)
                response = yield request
            challenge = parse_challenge(response.headers.get("www-authenticate"))
            if response.status_code == 401:
                step_up = False
            elif response.status_code == 403 and challenge.error == "insufficient_scope":
                step_up = True
            else:
                return
            if authorizations == self.max_authorizations:
                return
            authorizations += 1
            await response.aread()
            tokens = await self._obtain(server_url, challenge, tokens, step_up=step_up)

    def _present(self, request: httpx.Request, tokens: Tokens | None, server_url: str) -> None:
        # A token goes only to the resource it was issued for (authorization spec,
        # "Access Token Usage").
        if tokens is None or not _for(tokens, server_url):
            request.headers.pop("authorization", None)
            request.headers.pop("dpop", None)
            return
        self.dpop.present(request.headers, request.method, str(request.url), tokens)

    # -- obtaining tokens ---------------------------------------------------------------

    async def _obtain(
        self,
        server_url: str,
        challenge: BearerChallenge,
        held: Tokens | None,
        *,
        step_up: bool,
    ) -> Tokens:
        async with self._lock, self._shared():
            stored = await self.storage.get_tokens()
            if not step_up and stored is not None and stored != held and _for(stored, server_url):
                return stored  # another request renewed it while this one waited
            async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport) as http:
                found = await discover(http, server_url, challenge)
                self._found[server_url] = found
                tokens: Tokens | None = None
                if (
                    not step_up
                    and held is not None
                    and held.refresh_token
                    and held.issuer == found.issuer
                ):
                    tokens = await self._refresh(http, found, held)
                if tokens is None:
                    tokens = await self._grant(http, found, challenge, held, step_up=step_up)
            await self.storage.set_tokens(tokens)
            return tokens

    async def _renew(self, server_url: str, held: Tokens) -> Tokens:
        """Refresh a token about to expire before sending it, when this server's
        authorization server is already known; otherwise the 401 will say where."""
        found = self._found.get(server_url)
        if found is None or found.issuer != held.issuer:
            return held
        async with self._lock, self._shared():
            stored = await self.storage.get_tokens()
            if stored is not None and stored != held:
                return stored
            async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport) as http:
                tokens = await self._refresh(http, found, held)
            if tokens is None:
                return held
            await self.storage.set_tokens(tokens)
            return tokens

    async def fresh_tokens(self, server_url: str) -> Tokens:
        """The held tokens for ``server_url``, refreshed first when they are about to
        expire (the authorization server found from the server's well-known metadata
        when no request found it yet): a valid access token to hand to another program.
        OAuthError when none is held, or it cannot be refreshed."""
        held = await self.storage.get_tokens()
        if held is None or not _for(held, server_url):
            raise OAuthError(f"no tokens are held for {server_url}")
        if not held.expired():
            return held
        if not held.refresh_token:
            raise OAuthError(f"the token for {server_url} expired, and no refresh token is held")
        async with self._lock, self._shared():
            stored = await self.storage.get_tokens()
            if stored is not None and stored != held and _for(stored, server_url):
                held = stored  # refreshed meanwhile: its refresh token is the one to use
                if not held.expired() or not held.refresh_token:
                    return held
            async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport) as http:
                found = self._found.get(server_url)
                if found is None or found.issuer != held.issuer:
                    found = await discover(http, server_url, BearerChallenge())
                    self._found[server_url] = found
                tokens = await self._refresh(http, found, held)
            if tokens is None:
                raise OAuthError(f"the refresh token for {server_url} was refused")
            await self.storage.set_tokens(tokens)
            return tokens

    def _select_scope(
        self, found: Discovery, challenge: BearerChallenge, held: Tokens | None, step_up: bool
    ) -> str | None:
        """The challenge's scopes, else the resource's, else the configured ones, else
        none (authorization spec, "Scope Selection Strategy"); on step-up the
        union with those already held."""
        if challenge.scope:
            chosen = _scopes(challenge.scope)
        elif found.resource_scopes is not None:
            chosen = list(found.resource_scopes)
        else:
            chosen = _scopes(self.scope)
        if step_up and held is not None and held.issuer == found.issuer:
            chosen = _union(_scopes(held.scope), chosen)
        if (
            chosen
            and self.refresh_tokens
            and self.grant == "authorization_code"
            and found.supports("scopes_supported", "offline_access")
        ):
            chosen = _union(chosen, ["offline_access"])
        return " ".join(chosen) or None

    async def _grant(
        self,
        http: httpx.AsyncClient,
        found: Discovery,
        challenge: BearerChallenge,
        held: Tokens | None,
        *,
        step_up: bool,
    ) -> Tokens:
        client = await self._identify(http, found)
        scope = self._select_scope(found, challenge, held, step_up)
        if self.grant == "client_credentials":
            body = prepare_token_request("client_credentials", scope=scope, resource=found.resource)
            return await self._token_request(http, found, client, body, scope)
        if self.grant == "jwt_bearer":
            assert self.assertion is not None
            body = await bearer_grant(self.assertion, http, found.issuer, found.resource, scope)
            return await self._token_request(http, found, client, body, scope)
        return await self._authorization_code(http, found, client, scope)

    async def _authorization_code(
        self, http: httpx.AsyncClient, found: Discovery, client: ClientInfo, scope: str | None
    ) -> Tokens:
        if self.user_agent is None:
            raise OAuthError("authorization needs a user agent: OAuth(user_agent=...)")
        # PKCE is required, S256 when the server can (authorization spec,
        # "Authorization Code Protection"); a server that lists no S256 is refused.
        if not found.supports("code_challenge_methods_supported", "S256"):
            raise OAuthError("the authorization server does not advertise PKCE with S256")
        # The address goes to a browser: https (or http on loopback) only, never file:
        # or a program's scheme (check_authorization_url).
        endpoint = check_authorization_url(found.endpoint("authorization_endpoint"))
        verifier = generate_token(64)
        state = generate_token(32)
        url = prepare_grant_uri(
            endpoint,
            client.client_id,
            "code",
            redirect_uri=self.redirect_uri,
            scope=scope,
            state=state,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
            resource=found.resource,
        )
        callback = await self.user_agent.authorize(url, self.redirect_uri)
        params = dict(parse_qsl(urlsplit(callback).query, keep_blank_values=True))
        self._check_issuer(found, params.get("iss"))
        if params.get("state") != state:
            raise OAuthError("the authorization response's state does not match the request")
        if "error" in params:
            raise OAuthError(f"authorization refused: {params['error']}")
        code = params.get("code")
        if not code:
            raise OAuthError("the authorization response carries no code")
        body = prepare_token_request(
            "authorization_code",
            redirect_uri=self.redirect_uri,
            code=code,
            code_verifier=verifier,
            resource=found.resource,
        )
        return await self._token_request(http, found, client, body, scope)

    @staticmethod
    def _check_issuer(found: Discovery, iss: str | None) -> None:
        """RFC 9207 §2.4 as the authorization spec tables it: a present
        ``iss`` must equal the recorded issuer exactly (no normalization); an absent
        one is refused only when the server advertised sending it."""
        if iss is not None:
            if iss != found.issuer:
                raise OAuthError("the authorization response came from another issuer")
        elif found.metadata.get("authorization_response_iss_parameter_supported") is True:
            raise OAuthError("the authorization response lacks the iss its server promised")

    async def _refresh(
        self, http: httpx.AsyncClient, found: Discovery, held: Tokens
    ) -> Tokens | None:
        """New tokens from the refresh token, or None when the server refuses it."""
        client = await self._identify(http, found)
        body = prepare_token_request(
            "refresh_token", refresh_token=held.refresh_token, resource=found.resource
        )
        try:
            return await self._token_request(http, found, client, body, held.scope, held)
        except OAuthError:
            return None

    async def _token_request(
        self,
        http: httpx.AsyncClient,
        found: Discovery,
        client: ClientInfo,
        body: str,
        scope: str | None,
        held: Tokens | None = None,
    ) -> Tokens:
        uri = found.endpoint("token_endpoint")
        proving = self.dpop.proof_key(found.metadata, held)
        for attempt in range(2):
            response = await self._post_token(http, found, client, uri, body, proving)
            fresh = self.dpop.nonces.note(uri, response.headers)
            try:
                data = response.json()
            except ValueError:
                data = None
            error = data.get("error") if isinstance(data, dict) else None
            if proving is None or attempt or error != "use_dpop_nonce" or not fresh:
                break  # else: the proof is made again with the nonce (RFC 9449 section 8)
        if response.status_code != 200 or not isinstance(data, dict):
            raise OAuthError(f"the token endpoint answered {response.status_code} {error or ''}")
        access = data.get("access_token")
        kind = str(data.get("token_type") or "")
        if not isinstance(access, str) or not access:
            raise OAuthError("the token response has no access_token")
        if kind.lower() not in ("bearer", "dpop") or (kind.lower() == "dpop" and not proving):
            raise OAuthError(f"unsupported token type {kind!r}")
        bound = proving if kind.lower() == "dpop" else None
        expires_in = data.get("expires_in")
        refresh = data.get("refresh_token")
        if not isinstance(refresh, str) or not refresh:
            refresh = held.refresh_token if held is not None else None
        return Tokens(
            access_token=access,
            issuer=found.issuer,
            token_type="Bearer" if bound is None else "DPoP",
            refresh_token=refresh,
            scope=str(data.get("scope") or scope or "") or None,
            expires_at=(
                time.time() + float(expires_in)
                if isinstance(expires_in, int | float) and not isinstance(expires_in, bool)
                else None
            ),
            resource=found.resource,
            dpop_key=None if bound is None else bound.private_jwk(),
        )

    async def _post_token(
        self,
        http: httpx.AsyncClient,
        found: Discovery,
        client: ClientInfo,
        uri: str,
        body: str,
        proving: DPoPKey | None,
    ) -> httpx.Response:
        """One token request: the client authenticated (a new assertion each time), with
        a new proof when ``proving``."""
        headers = {
            "content-type": "application/x-www-form-urlencoded",
            "accept": "application/json",
        }
        if client.auth_method == "private_key_jwt":
            if self.client_key is None:
                raise OAuthError("private_key_jwt needs OAuth(client_key=...)")
            body += "&" + urlencode(self.client_key.form(client.client_id, uri, found.issuer))
        else:
            auth = ClientAuth(client.client_id, client.client_secret, client.auth_method)
            uri, headers, body = auth.prepare("POST", uri, headers, body)
        if proving is not None:
            headers["dpop"] = proving.proof("POST", uri, nonce=self.dpop.nonces.get(uri))
        return await http.post(uri, content=body, headers=headers)

    # -- the client's identity -----------------------------------------------------------

    async def _identify(self, http: httpx.AsyncClient, found: Discovery) -> ClientInfo:
        registered = await self.storage.get_client(found.issuer)
        if registered is not None:
            return registered
        if self.client_id is not None:
            return ClientInfo(self.client_id, self.client_secret, self._static_method(found))
        if self.client_metadata_url is not None and (
            found.metadata.get("client_id_metadata_document_supported") is True
        ):
            return ClientInfo(self.client_metadata_url)
        if "registration_endpoint" in found.metadata:
            client = await self._register(http, found)
            await self.storage.set_client(found.issuer, client)
            return client
        raise OAuthError(
            f"no client identity for {found.issuer}: it offers neither dynamic registration "
            "nor client metadata documents, and no client_id was given"
        )

    def _static_method(self, found: Discovery) -> str:
        """How pre-registered credentials authenticate: ``private_key_jwt`` with a key,
        none without a secret, else the first of basic and post the server lists (basic
        when it lists none, RFC 8414 §2)."""
        listed = found.metadata.get("token_endpoint_auth_methods_supported")
        if self.client_key is not None:
            if isinstance(listed, list) and "private_key_jwt" not in listed:
                raise OAuthError(f"{found.issuer} does not accept private_key_jwt")
            return "private_key_jwt"
        if not self.client_secret:
            return "none"
        if not isinstance(listed, list):
            return "client_secret_basic"
        for method in ("client_secret_basic", "client_secret_post"):
            if method in listed:
                return method
        return "client_secret_basic"

    async def _register(self, http: httpx.AsyncClient, found: Discovery) -> ClientInfo:
        """Dynamic client registration (RFC 7591)."""
        listed = found.metadata.get("token_endpoint_auth_methods_supported")
        method = next(
            (m for m in _REGISTER_METHODS if not isinstance(listed, list) or m in listed),
            "client_secret_basic",
        )
        grant_types = ["authorization_code"]
        if self.refresh_tokens:
            grant_types.append("refresh_token")
        request: dict[str, Any] = {
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            # The spec's client registration: application_type is required.
            "application_type": self.application_type,
        }
        response = await http.post(found.endpoint("registration_endpoint"), json=request)
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status_code not in (200, 201) or not isinstance(data, dict):
            raise OAuthError(f"dynamic client registration answered {response.status_code}")
        client_id = data.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise OAuthError("dynamic client registration returned no client_id")
        secret = data.get("client_secret")
        secret = secret if isinstance(secret, str) and secret else None
        granted = data.get("token_endpoint_auth_method")
        if not isinstance(granted, str):
            granted = method if secret or method == "none" else "none"
        if secret is None:
            granted = "none"
        return ClientInfo(client_id, secret, granted)
