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

Nothing here does I/O except through the verifier, and nothing knows about ASGI.
Over stdio none of this applies: the spec has stdio servers take credentials from
their environment, so the core sees no scopes there and checks none.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from snodo.auth.challenge import MalformedAuthorization, bearer_token, challenge, check_scope_token
from snodo.auth.tokens import AccessToken, InvalidToken, TokenVerifier, VerifierUnavailable

__all__ = ["Answer", "Authorized", "EndpointRequest", "ProtectedResource", "Refused"]

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
    """A request answered without reaching the core: status, challenge, JSON body."""

    def __init__(self, status: int, www_authenticate: str | None, body: Mapping[str, str]):
        super().__init__(body.get("error", "refused"))
        self.status = status
        self.www_authenticate = www_authenticate
        self.body = _json(body)

    @property
    def answer(self) -> Answer:
        challenge = self.www_authenticate
        headers = () if challenge is None else ((b"www-authenticate", challenge.encode()),)
        return Answer(self.status, headers, self.body)


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
        nothing."""
        return None

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

    async def authorize(self, headers: Mapping[str, str]) -> Authorized:
        """Check the request's bearer token; ``Refused`` says how to answer otherwise."""
        try:
            token = bearer_token(headers)
        except MalformedAuthorization:
            raise Refused(
                400,
                self._challenge("invalid_request", self._challenge_scopes()),
                {"error": "invalid_request", "error_description": "Malformed bearer token"},
            ) from None
        if token is None:
            raise Refused(
                401,
                self._challenge(None, self._challenge_scopes()),
                {"error": "invalid_token", "error_description": "Authorization required"},
            )
        try:
            verified = await self.verifier.verify(token)
        except InvalidToken as exc:
            log.info("refused a bearer token: %s", exc)
            raise Refused(
                401,
                self._challenge("invalid_token", self._challenge_scopes()),
                {"error": "invalid_token", "error_description": "Invalid or expired token"},
            ) from None
        except VerifierUnavailable as exc:
            log.warning("cannot verify bearer tokens: %s", exc)
            raise Refused(
                503,
                None,
                {"error": "temporarily_unavailable", "error_description": "Try again later"},
            ) from None
        scopes = self.widen(verified.scopes)
        if not self.required_scopes <= scopes:
            raise self.insufficient(())
        return Authorized(verified.subject, scopes, verified)

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

    def _challenge(self, error: str | None, scopes: Iterable[str]) -> str:
        return challenge(resource_metadata=self.metadata_url, scopes=scopes, error=error)
