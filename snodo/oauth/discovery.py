"""Finding the authorization server for an MCP server, and checking what it says.

Theory of operation. A protected MCP server names its protected resource metadata
(RFC 9728) in its challenge, or publishes it at a well-known address built from its
URL. A challenge's address is fetched only on the server's own origin: any other
would let a server (or whoever can put a header in its answer) make the client request
an address of its choosing, such as one inside the client's network; the well-known
addresses are tried instead. The document names the resource (which must be the server
the client meant to reach, RFC 9728 §3.3) and its authorization servers. Each
authorization server's own metadata (RFC 8414, or OpenID Connect discovery) sits at one
of several well-known addresses depending on whether its issuer has a path; its
``issuer`` must equal the issuer the address was built from, character for character,
or the document is not used (RFC 8414 §3.3). The address lists and checks here are
plain functions; the fetching is one function over an ``httpx.AsyncClient`` so tests
can hand it a mock.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from snodo.oauth.challenge import BearerChallenge
from snodo.oauth.errors import OAuthError

__all__ = [
    "Discovery",
    "authorization_server_metadata_urls",
    "canonical_resource",
    "discover",
    "protected_resource_metadata_urls",
    "resource_allowed",
    "same_origin",
]

log = logging.getLogger("snodo.oauth")

_PRM = "/.well-known/oauth-protected-resource"
_OAUTH = "/.well-known/oauth-authorization-server"
_OPENID = "/.well-known/openid-configuration"


def canonical_resource(server_url: str) -> str:
    """The server URL as an RFC 8707 resource: lowercase scheme and host, no
    fragment, no trailing slash on the path (authorization spec, "Canonical
    Server URI")."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def protected_resource_metadata_urls(server_url: str) -> list[str]:
    """Where to look for the resource metadata when the challenge names none, in the
    order the spec gives: under the MCP endpoint's path, then at the root."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    root = urlunsplit((parts.scheme, parts.netloc, _PRM, "", ""))
    if not path:
        return [root]
    return [urlunsplit((parts.scheme, parts.netloc, _PRM + path, "", "")), root]


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """The metadata addresses for an issuer, in the order the spec gives: RFC 8414
    then OpenID Connect, path-inserted forms first when the issuer has a path."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if not path:
        return [at(_OAUTH), at(_OPENID)]
    return [at(_OAUTH + path), at(_OPENID + path), at(path + _OPENID)]


def _origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port (the scheme's default when none is written), compared
    without case; a port that is not a number counts as no origin at all."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        return ("", "", None)
    if port is None:
        port = {"https": 443, "http": 80}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def same_origin(url: str, server_url: str) -> bool:
    """Whether ``url`` has the scheme, host and port of ``server_url``."""
    mine = _origin(server_url)
    return bool(mine[1]) and _origin(url) == mine


def resource_allowed(resource: str, server_url: str) -> bool:
    """Whether metadata naming ``resource`` may speak for ``server_url``: same origin,
    and the resource's path is the server's path or a parent of it (root metadata
    names the origin)."""
    want = urlsplit(canonical_resource(server_url))
    got = urlsplit(canonical_resource(resource))
    if (got.scheme, got.netloc) != (want.scheme, want.netloc):
        return False
    if not got.path:
        return True
    return want.path == got.path or want.path.startswith(got.path + "/")


@dataclass(frozen=True)
class Discovery:
    """What discovery found: the resource to ask tokens for, the authorization
    server's validated metadata, and the scopes the resource lists."""

    resource: str
    issuer: str
    metadata: dict[str, Any] = field(repr=False)
    resource_scopes: list[str] | None = None

    def endpoint(self, name: str) -> str:
        """The metadata's URL ``name`` (e.g. ``token_endpoint``); OAuthError if absent."""
        value = self.metadata.get(name)
        if not isinstance(value, str) or not value:
            raise OAuthError(f"the authorization server metadata has no {name}")
        return value

    def supports(self, name: str, value: str) -> bool:
        """Whether the metadata's list ``name`` (e.g. ``grant_types_supported``) has
        ``value``; an absent list supports nothing."""
        listed = self.metadata.get(name)
        return isinstance(listed, list) and value in listed


async def _get_json(http: Any, url: str) -> dict[str, Any] | None:
    """The JSON object at ``url``, or None for a 4xx (try the next address)."""
    response = await http.get(url, headers={"accept": "application/json"})
    if 400 <= response.status_code < 500:
        return None
    if response.status_code != 200:
        raise OAuthError(f"GET {url}: HTTP {response.status_code}")
    try:
        value = response.json()
    except ValueError as exc:
        raise OAuthError(f"GET {url}: not JSON") from exc
    if not isinstance(value, dict):
        raise OAuthError(f"GET {url}: not a JSON object")
    return value


async def discover(http: Any, server_url: str, challenge: BearerChallenge) -> Discovery:
    """Resource metadata, then the first authorization server's validated metadata."""
    named = challenge.resource_metadata
    if named and same_origin(named, server_url):
        urls = [named]
    else:
        if named:
            log.warning(
                "ignored resource_metadata %r: not on the origin of %s; trying its "
                "well-known addresses",
                named[:200],
                server_url,
            )
        urls = protected_resource_metadata_urls(server_url)
    prm: dict[str, Any] | None = None
    for url in urls:
        prm = await _get_json(http, url)
        if prm is not None:
            break
    if prm is None:
        raise OAuthError(f"no protected resource metadata for {server_url}")

    resource = prm.get("resource")
    if not isinstance(resource, str) or not resource:
        raise OAuthError("the protected resource metadata names no resource")
    # RFC 9728 §3.3: metadata for another resource must not be used.
    if not resource_allowed(resource, server_url):
        raise OAuthError(f"the protected resource metadata is for {resource}, not {server_url}")
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise OAuthError("the protected resource metadata names no authorization server")
    issuer: str = servers[0]
    scopes = prm.get("scopes_supported")
    resource_scopes = [str(s) for s in scopes] if isinstance(scopes, list) else None

    for url in authorization_server_metadata_urls(issuer):
        metadata = await _get_json(http, url)
        if metadata is None:
            continue
        # RFC 8414 §3.3 and the spec's "Authorization Server Metadata Discovery": the
        # issuer must be identical to the one the address was built from.
        if metadata.get("issuer") != issuer:
            raise OAuthError(
                f"the authorization server metadata at {url} names issuer "
                f"{metadata.get('issuer')!r}, not {issuer!r}"
            )
        return Discovery(canonical_resource(resource), issuer, metadata, resource_scopes)
    raise OAuthError(f"no authorization server metadata for {issuer}")
