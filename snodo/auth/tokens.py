"""What a token verifier answers, and the interface every verifier offers.

A verifier turns the bearer token of one request into an ``AccessToken`` (who, which
scopes, until when) or refuses it. It decides validity only; what the token may do is
the resource server's business (``snodo.auth.protected``). Two verifiers ship:
``snodo.auth.jwt.JwtVerifier`` (signed JWTs checked against the authorization server's
published keys) and ``snodo.auth.introspection.IntrospectionVerifier`` (RFC 7662).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "AccessToken",
    "InvalidToken",
    "TokenVerifier",
    "VerifierUnavailable",
    "bound_key",
]


class InvalidToken(Exception):
    """The token is not one this resource accepts: malformed, forged, expired, not yet
    valid, from another issuer, for another audience, inactive.

    The reason is for the server's log; the client is told only ``invalid_token``.
    """


class VerifierUnavailable(Exception):
    """The token could not be checked (the authorization server did not answer): the
    resource answers 503, since the token may well be valid."""


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A verified access token."""

    subject: str
    """Who the token speaks for, as a principal (``subject_of``): ``sub``, else
    ``client:`` and the ``client_id`` of a client acting on its own behalf."""
    scopes: frozenset[str]
    """What the authorization server granted (``scope``), before any implied scopes."""
    issuer: str | None = None
    client_id: str | None = None
    expires_at: float | None = None
    """``exp`` as a POSIX time, when the token carries one."""
    claims: Mapping[str, Any] = field(default_factory=dict)
    """Every claim (JWT) or introspection member, for application checks."""


class TokenVerifier(Protocol):
    """Checks one bearer token; raises ``InvalidToken`` or ``VerifierUnavailable``."""

    async def verify(self, token: str) -> AccessToken:
        """The ``AccessToken`` for a valid ``token``; ``InvalidToken`` when it is not
        valid, ``VerifierUnavailable`` when its validity could not be established."""
        ...


def scope_set(value: Any) -> frozenset[str]:
    """The ``scope`` claim (RFC 8693 section 4.2, RFC 7662: space-separated), tolerating
    the list form some servers issue as ``scp``; anything else grants nothing."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return frozenset(value)
    return frozenset()


CLIENT_PREFIX = "client:"
"""The principal of a token without ``sub``: a client on its own behalf (client
credentials), never to be taken for a user whose ``sub`` is the same string."""
SUBJECT_PREFIX = "sub:"
"""Put before a ``sub`` that itself begins with a prefix, so no user's principal can
take the shape of a client's."""


def subject_of(claims: Mapping[str, Any]) -> str:
    """The principal a token binds state, sessions and tasks to: its ``sub``, else
    ``client:<client_id>`` (a token a client holds on its own behalf, which must not
    open the state of a user whose ``sub`` equals that client id). A ``sub`` beginning
    with ``client:`` or ``sub:`` is written ``sub:<sub>``, so the two kinds never meet;
    a token naming neither cannot be bound to a principal and is refused."""
    subject = claims.get("sub")
    if isinstance(subject, str) and subject:
        if subject.startswith((CLIENT_PREFIX, SUBJECT_PREFIX)):
            return SUBJECT_PREFIX + subject
        return subject
    client_id = claims.get("client_id")
    if isinstance(client_id, str) and client_id:
        return CLIENT_PREFIX + client_id
    raise InvalidToken("the token names no subject")


def audiences(value: Any) -> tuple[str, ...]:
    """``aud`` as a tuple: a string, or a list of strings (RFC 7519 section 4.1.3)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def canonical_resource(uri: str) -> str:
    """A resource URI compared as basic/authorization says servers should accept it:
    scheme and host in any case, and an empty path with or without its ``/``."""
    parts = urllib.parse.urlsplit(uri)
    path = "" if parts.path == "/" else parts.path
    return urllib.parse.urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), path, parts.query, parts.fragment)
    )


def audience_matches(value: Any, resource: str) -> bool:
    """Whether ``aud`` names this resource (RFC 8707 section 2, RFC 9068 section 4)."""
    wanted = canonical_resource(resource)
    return any(canonical_resource(aud) == wanted for aud in audiences(value))


def bound_key(claims: Mapping[str, Any]) -> str | None:
    """The key thumbprint a token is bound to (``cnf.jkt``, RFC 9449 section 6: a
    DPoP-bound token), or None for a bearer token."""
    confirmation = claims.get("cnf")
    if not isinstance(confirmation, Mapping):
        return None
    jkt = confirmation.get("jkt")
    return jkt if isinstance(jkt, str) and jkt else None
