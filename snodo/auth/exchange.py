"""Token exchange (RFC 8693) for handlers: the caller's token traded for one to call
another service with, on the caller's behalf.

Theory of operation. A handler that calls a downstream API as the user must not pass
the user's token on: it was issued for this server (its audience), and a token that
works everywhere is a token that leaks everywhere. It asks the authorization server
instead, ``await ctx.exchange_token(audience=..., scopes=[...])``: a token-exchange
grant (``urn:ietf:params:oauth:grant-type:token-exchange``) naming the caller's token
as ``subject_token`` and the downstream service as ``audience`` (or ``resource``), the
server authenticating as its own client of that authorization server. What comes back
is kept until shortly before it expires, keyed by the caller's token and what was
asked, so a handler that runs on every request asks once per token. The authorization
server decides what the exchange grants (Okta, Microsoft Entra's on-behalf-of, Auth0,
Keycloak and ZITADEL offer it in some form); a refusal is ``ExchangeRefused``.

``TokenExchange`` is given to the resource (``ProtectedResource(token_exchange=...)``
or the OAuth proxy's, which trades the provider's token it holds for the caller); the
HTTP app hands each request's exchanger to the handler's context. The cache is this
process's: a miss on another worker costs one more exchange, never a wrong token.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.exchange needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.discovery import fetch_metadata
from snodo.auth.tokens import VerifierUnavailable

__all__ = [
    "ACCESS_TOKEN_TYPE",
    "TOKEN_EXCHANGE_GRANT",
    "ExchangeRefused",
    "ExchangedToken",
    "TokenExchange",
]

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
"""RFC 8693 section 2.1: the grant type of a token exchange."""
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
"""RFC 8693 section 3: an access token, as subject or as what is asked for."""
MAX_ANSWER_BYTES = 64 * 1024

AuthMethod = Literal["client_secret_basic", "client_secret_post", "none"]


class ExchangeRefused(Exception):
    """The authorization server refused the exchange (its OAuth ``error``), or could
    not be asked (``error`` is ``temporarily_unavailable`` then)."""

    def __init__(self, error: str, description: str = "") -> None:
        super().__init__(f"{error}: {description}" if description else error)
        self.error = error
        self.description = description


@dataclass(frozen=True, slots=True)
class ExchangedToken:
    """What the exchange issued (RFC 8693 section 2.2.1)."""

    access_token: str
    token_type: str
    issued_token_type: str
    expires_at: float | None
    """When it expires (POSIX time), from ``expires_in``; None when not said."""
    scopes: frozenset[str]

    @property
    def authorization(self) -> str:
        """The ``Authorization`` header value to call the downstream service with."""
        kind = "Bearer" if self.token_type.lower() in ("bearer", "n_a") else self.token_type
        return f"{kind} {self.access_token}"


def _basic(client_id: str, secret: str) -> str:
    """RFC 6749 section 2.3.1: each part form-encoded, then the pair base64."""
    pair = f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(secret)}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


class TokenExchange:
    """Exchanges tokens at an authorization server's token endpoint as ``client_id``.

    ``token_endpoint``, or ``issuer`` to find it in the server's metadata. The client
    authenticates with ``client_secret`` (``auth_method``: basic or post) or not at
    all (``none``). ``subject_token_type`` and ``requested_token_type`` are RFC 8693's
    (access tokens both by default); ``params`` go into every request (a provider's own,
    such as Entra's ``requested_token_use``). Answers are kept until ``leeway`` seconds
    before they expire, at most ``max_cached`` of them.
    """

    def __init__(
        self,
        token_endpoint: str | None = None,
        *,
        issuer: str | None = None,
        client_id: str,
        client_secret: str | None = None,
        auth_method: AuthMethod = "client_secret_basic",
        subject_token_type: str = ACCESS_TOKEN_TYPE,
        requested_token_type: str | None = ACCESS_TOKEN_TYPE,
        params: Mapping[str, str] | None = None,
        max_cached: int = 1024,
        leeway: float = 30.0,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if (token_endpoint is None) == (issuer is None):
            raise ValueError("give the token_endpoint or the issuer, one of them")
        if auth_method != "none" and not client_secret:
            raise ValueError(f"{auth_method} needs client_secret")
        self.token_endpoint = token_endpoint
        self.issuer = issuer
        self.client_id = client_id
        self.client_secret = client_secret
        self.auth_method = auth_method
        self.subject_token_type = subject_token_type
        self.requested_token_type = requested_token_type
        self.params = dict(params or {})
        self.max_cached = max_cached
        self.leeway = leeway
        self.timeout = timeout
        self.transport = transport
        self.clock = clock
        self.exchanges = 0
        """How many exchanges were asked of the authorization server (for monitoring)."""
        self._cache: OrderedDict[tuple[str, ...], ExchangedToken] = OrderedDict()
        self._pending: dict[tuple[str, ...], asyncio.Future[ExchangedToken]] = {}

    async def exchange(
        self,
        subject_token: str,
        *,
        audience: str | None = None,
        resource: str | None = None,
        scopes: Iterable[str] = (),
    ) -> ExchangedToken:
        """A token for ``audience`` (or ``resource``) with ``scopes``, on behalf of the
        holder of ``subject_token``: kept from an earlier exchange, else asked for."""
        wanted = sorted(set(scopes))
        key = (
            hashlib.sha256(subject_token.encode()).hexdigest(),
            audience or "",
            resource or "",
            " ".join(wanted),
        )
        kept = self._cache.get(key)
        if kept is not None and (
            kept.expires_at is not None and kept.expires_at - self.leeway > self.clock()
        ):
            self._cache.move_to_end(key)
            return kept
        pending = self._pending.get(key)
        if pending is not None:  # the same exchange is under way: share its answer
            return await asyncio.shield(pending)
        future: asyncio.Future[ExchangedToken] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            found = await self._ask(subject_token, audience, resource, wanted)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            self._pending.pop(key, None)
        future.set_result(found)
        if found.expires_at is not None:
            self._cache[key] = found
            while len(self._cache) > self.max_cached:
                self._cache.popitem(last=False)
        return found

    async def _endpoint(self, http: httpx.AsyncClient) -> str:
        if self.token_endpoint is None:
            assert self.issuer is not None
            try:
                metadata = await fetch_metadata(http, self.issuer)
            except VerifierUnavailable as exc:
                raise ExchangeRefused("temporarily_unavailable", str(exc)) from None
            endpoint = metadata.get("token_endpoint")
            if not isinstance(endpoint, str) or not endpoint:
                raise ExchangeRefused("temporarily_unavailable", "no token_endpoint")
            self.token_endpoint = endpoint
        return self.token_endpoint

    async def _ask(
        self, subject_token: str, audience: str | None, resource: str | None, scopes: list[str]
    ) -> ExchangedToken:
        form: dict[str, str] = {
            **self.params,
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": subject_token,
            "subject_token_type": self.subject_token_type,
        }
        if self.requested_token_type:
            form["requested_token_type"] = self.requested_token_type
        if audience:
            form["audience"] = audience
        if resource:
            form["resource"] = resource
        if scopes:
            form["scope"] = " ".join(scopes)
        headers = {"accept": "application/json"}
        if self.auth_method == "client_secret_basic":
            assert self.client_secret is not None
            headers["authorization"] = _basic(self.client_id, self.client_secret)
        else:
            form["client_id"] = self.client_id
            if self.auth_method == "client_secret_post":
                assert self.client_secret is not None
                form["client_secret"] = self.client_secret
        self.exchanges += 1
        async with httpx.AsyncClient(
            timeout=self.timeout, transport=self.transport, follow_redirects=False
        ) as http:
            endpoint = await self._endpoint(http)
            try:
                response = await http.post(endpoint, data=form, headers=headers)
            except httpx.HTTPError as exc:
                raise ExchangeRefused("temporarily_unavailable", type(exc).__name__) from None
        return self._read(response, scopes)

    def _read(self, response: httpx.Response, asked: list[str]) -> ExchangedToken:
        try:
            document: Any = response.json() if len(response.content) <= MAX_ANSWER_BYTES else None
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise ExchangeRefused("server_error", f"HTTP {response.status_code}, not JSON")
        if response.status_code != 200:
            error = document.get("error")
            description = document.get("error_description")
            raise ExchangeRefused(
                error if isinstance(error, str) else f"HTTP {response.status_code}",
                description if isinstance(description, str) else "",
            )
        access = document.get("access_token")
        kind = document.get("token_type")
        if not isinstance(access, str) or not access or not isinstance(kind, str):
            raise ExchangeRefused("server_error", "the answer has no access_token or token_type")
        issued = document.get("issued_token_type")
        expires_in = document.get("expires_in")
        lifetime = (
            float(expires_in)
            if isinstance(expires_in, int | float) and not isinstance(expires_in, bool)
            else None
        )
        scope = document.get("scope")
        return ExchangedToken(
            access_token=access,
            token_type=kind,
            issued_token_type=issued if isinstance(issued, str) else ACCESS_TOKEN_TYPE,
            expires_at=None if lifetime is None else self.clock() + lifetime,
            scopes=frozenset(scope.split() if isinstance(scope, str) else asked),
        )
