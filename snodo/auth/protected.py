"""The MCP server as an OAuth 2.1 protected resource (basic/authorization).

Theory of operation. A ``ProtectedResource`` holds what a resource server is: its
canonical URI, the authorization servers that issue its tokens, the scopes it speaks
of, and a ``TokenVerifier``. The HTTP app asks it three things:

- the Protected Resource Metadata document (RFC 9728) and the well-known paths it is
  served at: the path-suffixed form for the MCP endpoint, and the root form that
  clients fall back to;
- ``authorize(headers)``: the request's bearer token checked by the verifier, turned
  into an ``Authorized`` (the subject as principal, the granted scopes widened by the
  declared scope hierarchy) or refused with the status, challenge and body to answer
  (401 without or with a bad token, 400 for a malformed credential, 403 when the token
  lacks the scopes every request needs, 503 when the verifier cannot tell);
- ``insufficient(scopes)``: the 403 for an item whose scopes the core found missing.

A token bound to a client's key (``cnf.jkt``, RFC 9449) is taken only under the
``DPoP`` scheme with its proof, which ``dpop=`` checks (``snodo.auth.dpop``); without
it such a token is refused like a forged one. ``token_exchange=`` lets a handler trade
the caller's token for one to call another service with (``snodo.auth.exchange``,
``ctx.exchange_token``).

Nothing here does I/O except through the verifier, and nothing knows about ASGI.
Over stdio none of this applies: the spec has stdio servers take credentials from
their environment, so the core sees no scopes there and checks none.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from snodo.auth.challenge import MalformedAuthorization, challenge, check_scope_token, credentials
from snodo.auth.tokens import (
    AccessToken,
    InvalidToken,
    TokenVerifier,
    VerifierUnavailable,
    bound_key,
)

if TYPE_CHECKING:
    from snodo.auth.exchange import TokenExchange

__all__ = [
    "Answer",
    "Authorized",
    "EndpointRequest",
    "ProofChecker",
    "ProofRefused",
    "ProtectedResource",
    "Refused",
]

log = logging.getLogger("snodo.auth")

WELL_KNOWN = "/.well-known/oauth-protected-resource"
"""RFC 9728 section 3: the well-known URI suffix of protected resource metadata."""


@dataclass(frozen=True, slots=True)
class Authorized:
    """A request whose token was accepted."""

    principal: str
    scopes: frozenset[str]
    """Granted scopes with every scope they imply."""
    token: AccessToken
    exchange: Callable[..., Awaitable[Any]] | None = field(default=None, repr=False, compare=False)
    """Trades this token for another (``ctx.exchange_token``), where the resource has a
    ``token_exchange``; None otherwise."""


class Answer(NamedTuple):
    """What the HTTP app sends as it is: a status, headers beside the content type, and
    a body (JSON unless ``content_type`` says otherwise, as a consent page's HTML)."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    content_type: bytes = b"application/json"


class EndpointRequest(NamedTuple):
    """A request to one of ``endpoint_paths``, its body read whole (within the app's
    body limit): what an authorization server answers needs nothing of ASGI."""

    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    """Lower-case names, as the HTTP app reads them."""
    body: bytes
    address: str | None = None
    """The client's address as the server sees it (a reverse proxy's own, unless it is
    trusted to name the client: ``snodo run --proxy-headers``)."""


def _json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(document), separators=(",", ":")).encode()


class Refused(Exception):
    """A request answered without reaching the core: status, challenge, JSON body, and
    any other headers (a ``DPoP-Nonce``)."""

    def __init__(
        self,
        status: int,
        www_authenticate: str | None,
        body: Mapping[str, str],
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ):
        super().__init__(body.get("error", "refused"))
        self.status = status
        self.www_authenticate = www_authenticate
        self.body = _json(body)
        self.headers = headers

    @property
    def answer(self) -> Answer:
        challenge = self.www_authenticate
        headers = () if challenge is None else ((b"www-authenticate", challenge.encode()),)
        return Answer(self.status, headers + self.headers, self.body)


class ProofChecker(Protocol):
    """What checks DPoP proofs for a resource: ``snodo.auth.dpop.DPoP``."""

    algorithms: tuple[str, ...]
    required: bool

    def unshared(self) -> str | None: ...

    def metadata(self) -> dict[str, Any]: ...

    async def resource_request(
        self,
        headers: Mapping[str, str],
        method: str,
        uri: str,
        scheme: str,
        token: str,
        bound: str | None,
    ) -> None: ...


class ProofRefused(Exception):
    """A DPoP-bound request that does not prove (RFC 9449 section 7): ``error`` is the
    RFC's name for why (``invalid_dpop_proof``, ``use_dpop_nonce``, ``invalid_token``)."""

    def __init__(self, error: str, description: str, nonce: str | None = None) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.nonce = nonce
        """With ``use_dpop_nonce``: the nonce the client is to use."""


def _http_url(value: str, what: str) -> urllib.parse.SplitResult:
    parts = urllib.parse.urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or parts.fragment:
        raise ValueError(f"{what} must be an absolute http(s) URL without fragment: {value!r}")
    return parts


class ProtectedResource:
    """An MCP endpoint protected by OAuth; pass it as ``Server(authorization=...)``.

    ``resource`` is the endpoint's canonical URI as clients name it (RFC 8707), such as
    ``https://mcp.example.com/mcp``; tokens must carry it as their audience.
    ``required_scopes`` are needed by every request; items add their own at
    registration (``@server.tool(scopes=[...])``). ``implied_scopes`` declares the
    hierarchy (basic/authorization: a broader scope implies narrower ones), such as
    ``{"files:admin": ["files:write"], "files:write": ["files:read"]}``.
    ``dpop`` takes DPoP-bound tokens with their proofs (``snodo.auth.dpop.DPoP``);
    ``token_exchange`` serves ``ctx.exchange_token`` (``snodo.auth.exchange``).
    """

    def __init__(
        self,
        resource: str,
        authorization_servers: Sequence[str],
        verifier: TokenVerifier,
        *,
        scopes_supported: Iterable[str] = (),
        required_scopes: Iterable[str] = (),
        implied_scopes: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        dpop: ProofChecker | None = None,
        token_exchange: TokenExchange | None = None,
    ) -> None:
        parts = _http_url(resource, "resource")
        if parts.query:
            raise ValueError(f"resource must not carry a query: {resource!r}")
        if not authorization_servers:
            # authorization-server-discovery.mdx: at least one authorization server.
            raise ValueError("a protected resource names at least one authorization server")
        for issuer in authorization_servers:
            _http_url(issuer, "an authorization server")
        self.resource = resource
        self.authorization_servers = tuple(authorization_servers)
        self.verifier = verifier
        self.scopes_supported = tuple(check_scope_token(s) for s in scopes_supported)
        if "offline_access" in self.scopes_supported:
            # basic/authorization: refresh tokens are not a resource requirement.
            raise ValueError("offline_access does not belong in scopes_supported")
        self.required_scopes = frozenset(check_scope_token(s) for s in required_scopes)
        self.implied_scopes = {
            check_scope_token(broad): frozenset(check_scope_token(s) for s in narrow)
            for broad, narrow in (implied_scopes or {}).items()
        }
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.dpop = dpop
        self.token_exchange = token_exchange
        path = parts.path.rstrip("/")
        origin = f"{parts.scheme}://{parts.netloc}"
        self.metadata_url = origin + WELL_KNOWN + path
        """Where the metadata is (RFC 9728 section 3.1: the suffix before the path)."""
        self.metadata_paths = frozenset({WELL_KNOWN + path, WELL_KNOWN})
        """The paths the HTTP app serves the metadata at: path-suffixed and root."""

    endpoint_paths: frozenset[str] = frozenset()
    """Paths answered by ``endpoint`` before the MCP endpoint's checks: none for a plain
    resource; an authorization server beside it (``snodo.auth.proxy``) has its own."""

    async def endpoint(self, request: EndpointRequest) -> Answer:
        """The answer at one of ``endpoint_paths``; a plain resource has none."""
        return Answer(404, (), _json({"error": "not found"}))

    def unshared(self) -> str | None:
        """What of this resource one process keeps alone, which several workers cannot
        share (``snodo run --workers`` refuses then), or None: a plain resource keeps
        nothing, and its DPoP what its store and secret say."""
        return None if self.dpop is None else self.dpop.unshared()

    # -- metadata -----------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728 section 2)."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
        }
        if self.scopes_supported:
            document["scopes_supported"] = list(self.scopes_supported)
        document["bearer_methods_supported"] = ["header"]
        if self.dpop is not None:  # RFC 9449 section 7.1
            document.update(self.dpop.metadata())
            if self.dpop.required:
                document["dpop_bound_access_tokens_required"] = True
        if self.resource_name is not None:
            document["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            document["resource_documentation"] = self.resource_documentation
        return document

    def metadata_answer(self, method: str) -> Answer:
        """The answer at a metadata path (RFC 9728 section 3.2): the document to a GET,
        readable from any origin since it is public; 405 to anything else."""
        if method != "GET":
            return Answer(405, ((b"allow", b"GET"),), _json({"error": "method not allowed"}))
        cors = (b"access-control-allow-origin", b"*")
        return Answer(200, (cors, (b"cache-control", b"max-age=3600")), _json(self.metadata()))

    # -- requests -----------------------------------------------------------------------

    def widen(self, scopes: Iterable[str]) -> frozenset[str]:
        """Scopes with every scope they imply, transitively."""
        granted = set(scopes)
        pending = list(granted)
        while pending:
            for narrower in self.implied_scopes.get(pending.pop(), ()):
                if narrower not in granted:
                    granted.add(narrower)
                    pending.append(narrower)
        return frozenset(granted)

    async def authorize(self, headers: Mapping[str, str], method: str = "POST") -> Authorized:
        """Check the request's token (and its DPoP proof, for a ``method`` request to
        the resource); ``Refused`` says how to answer otherwise."""
        try:
            found = credentials(headers)
        except MalformedAuthorization:
            raise Refused(
                400,
                self._challenge("invalid_request", self._challenge_scopes()),
                {"error": "invalid_request", "error_description": "Malformed bearer token"},
            ) from None
        if found is None or (found[0] == "dpop" and self.dpop is None):
            raise Refused(
                401,
                self._unauthenticated(),
                {"error": "invalid_token", "error_description": "Authorization required"},
            )
        scheme, token = found
        try:
            verified = await self.verifier.verify(token)
        except InvalidToken as exc:
            log.info("refused a bearer token: %s", exc)
            raise Refused(
                401,
                self._challenge("invalid_token", self._challenge_scopes(), scheme),
                {"error": "invalid_token", "error_description": "Invalid or expired token"},
            ) from None
        except VerifierUnavailable as exc:
            log.warning("cannot verify bearer tokens: %s", exc)
            raise Refused(
                503,
                None,
                {"error": "temporarily_unavailable", "error_description": "Try again later"},
            ) from None
        await self._proven(headers, method, scheme, token, verified)
        scopes = self.widen(verified.scopes)
        if not self.required_scopes <= scopes:
            raise self.insufficient(())
        return Authorized(verified.subject, scopes, verified, self._exchanger(token, verified))

    async def _proven(
        self, headers: Mapping[str, str], method: str, scheme: str, token: str, got: AccessToken
    ) -> None:
        """A DPoP-bound token only with its proof (RFC 9449 section 7); with no ``dpop``
        here, only tokens bound to no key, as bearer tokens."""
        bound = bound_key(got.claims)
        dpop = self.dpop
        try:
            if dpop is not None:
                await dpop.resource_request(headers, method, self.resource, scheme, token, bound)
            elif bound is not None:
                raise ProofRefused("invalid_token", "this resource takes no DPoP-bound token")
        except ProofRefused as refused:
            log.info("refused a DPoP request: %s", refused)
            nonce = () if refused.nonce is None else ((b"dpop-nonce", refused.nonce.encode()),)
            scopes = self._challenge_scopes()
            raise Refused(
                401,
                self._challenge(refused.error, scopes, scheme, refused.description),
                {"error": refused.error, "error_description": refused.description},
                nonce,
            ) from None

    def _exchanger(self, token: str, got: AccessToken) -> Callable[..., Awaitable[Any]] | None:
        """What ``ctx.exchange_token`` calls for this request, or None."""
        exchange = self.token_exchange
        if exchange is None:
            return None

        async def exchanged(
            *, audience: str | None = None, resource: str | None = None, scopes: Iterable[str] = ()
        ) -> Any:
            subject = await self.subject_token(token, got)
            return await exchange.exchange(
                subject, audience=audience, resource=resource, scopes=scopes
            )

        return exchanged

    async def subject_token(self, presented: str, token: AccessToken) -> str:
        """The token ``ctx.exchange_token`` trades: the one the caller presented (the
        OAuth proxy trades the provider's token it holds for the caller instead)."""
        return presented

    def insufficient(self, scopes: Iterable[str]) -> Refused:
        """The 403 for a request that needs ``scopes`` (and what every request needs)."""
        needed = self.required_scopes | frozenset(scopes)
        return Refused(
            403,
            self._challenge("insufficient_scope", needed),
            {"error": "insufficient_scope", "error_description": "Insufficient scope"},
        )

    def _challenge_scopes(self) -> Iterable[str]:
        """What a 401 names: the scopes every request needs, else those supported."""
        return self.required_scopes or self.scopes_supported

    def _challenge(
        self,
        error: str | None,
        scopes: Iterable[str],
        scheme: str = "bearer",
        description: str | None = None,
    ) -> str:
        if scheme != "dpop":
            return challenge(resource_metadata=self.metadata_url, scopes=scopes, error=error)
        algs = self.dpop.algorithms if self.dpop is not None else ()
        return challenge(
            resource_metadata=self.metadata_url,
            scopes=scopes,
            error=error,
            description=description,
            scheme="DPoP",
            algs=algs,
        )

    def _unauthenticated(self) -> str:
        """The challenge to a request without credentials: Bearer, and DPoP beside it
        where DPoP is taken (RFC 9449 section 7.1)."""
        scopes = self._challenge_scopes()
        bearer = self._challenge(None, scopes)
        return bearer if self.dpop is None else f"{bearer}, {self._challenge(None, scopes, 'dpop')}"
