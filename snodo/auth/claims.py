"""A JWT's registered claims and its ``typ``, checked one way for every JWT snodo verifies.

An authorization server's access token (``snodo.auth.jwt``), the OAuth proxy's own
(``snodo.auth.proxy_tokens``) and an identity provider's ID token
(``snodo.auth.oidc_tokens``) differ in who signs them and what their audience is, not in
what a time or an issuer means. So one function checks them all, after the signature,
with joserfc's claims registry doing what RFC 7519 says of each claim:

* ``iss`` is exactly the issuer expected, and ``exp`` and ``aud`` are present;
* ``exp``, ``nbf`` and ``iat`` are NumericDates (finite numbers, never a boolean); ``exp``
  has not passed and ``nbf`` and ``iat`` are not in the future, each within the leeway
  given for clocks; ``sub`` and ``jti`` are strings, ``aud`` a string or a list of them;
* ``aud`` names the audience: a resource URI as RFC 8707 compares them
  (``snodo.auth.tokens.audience_matches``), or a client id exactly (OpenID Connect Core
  3.1.3.7);
* the claims a kind of token requires are present, and a ``nonce`` is the one expected.

``ClaimsRefused`` says what failed, for the server's log; the peer is told only that
the token was refused. ``type_matches`` reads a JWS ``typ`` header as RFC 7515 section
4.1.9 says: a media type, compared without case, ``application/`` implied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

try:
    from joserfc import jwt as jose_jwt
    from joserfc.errors import JoseError
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.claims needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.tokens import audience_matches, audiences

__all__ = ["ClaimsRefused", "check_claims", "type_matches"]


class ClaimsRefused(ValueError):
    """A JWT's claims do not hold; the message says which, for the log."""


def check_claims(
    claims: Mapping[str, Any],
    *,
    issuer: str,
    audience: str,
    now: float,
    leeway: float,
    audience_is_client: bool = False,
    required: Iterable[str] = (),
    nonce: str | None = None,
) -> None:
    """Raise ``ClaimsRefused`` unless ``claims`` hold for a token of ``issuer`` meant for
    ``audience`` (a resource URI; a client id with ``audience_is_client``) at ``now``,
    give or take ``leeway`` seconds; ``required`` names further claims that must be
    present, and ``nonce`` the value the token's must be."""
    essential: dict[str, Any] = {name: {"essential": True} for name in ("aud", *required)}
    registry = jose_jwt.JWTClaimsRegistry(
        now=lambda: int(now),
        leeway=int(leeway),
        iss={"essential": True, "value": issuer},
        exp={"essential": True},
        **essential,
    )
    try:
        registry.validate(dict(claims))
    except JoseError as exc:
        raise ClaimsRefused(str(exc) or type(exc).__name__) from None
    aud = claims["aud"]
    if audience_is_client:
        if audience not in audiences(aud):
            raise ClaimsRefused("aud: not for this client")
    elif not audience_matches(aud, audience):
        raise ClaimsRefused("aud: not for this resource")
    if nonce is not None and claims.get("nonce") != nonce:
        raise ClaimsRefused("nonce: another sign-in's")


def type_matches(typ: Any, expected: str) -> bool:
    """Whether a ``typ`` header names the media type ``expected``: without regard to case,
    and with ``application/`` taken as written where it is left out (RFC 7515 4.1.9), so
    ``at+jwt`` and ``application/at+jwt`` are one type (RFC 9068 section 4)."""
    if not isinstance(typ, str):
        return False

    def full(media_type: str) -> str:
        lowered = media_type.lower()
        return lowered if "/" in lowered else "application/" + lowered

    return full(typ) == full(expected)
