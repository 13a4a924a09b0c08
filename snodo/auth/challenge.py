"""Bearer tokens in, ``WWW-Authenticate`` challenges out (RFC 6750, RFC 9728).

Only the ``Authorization`` header carries a token here: basic/authorization forbids
tokens in the query string, and form bodies are not MCP requests. A DPoP-bound token
comes under the ``DPoP`` scheme instead (RFC 9449 section 7.1), with the same syntax.
A challenge is built from parameters whose values were checked against RFC 6750's
character sets, so what goes into the header can never break out of its quoted string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = [
    "MalformedAuthorization",
    "bearer_token",
    "challenge",
    "check_scope_token",
    "credentials",
]

# RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
# RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
# RFC 6750 section 3: error_description = *( %x20-21 / %x23-5B / %x5D-7E )
_DESCRIPTION = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")
# A URI in a quoted string: printable ASCII without quote or backslash.
_QUOTABLE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


class MalformedAuthorization(Exception):
    """A ``Bearer`` credential that is not a b64token: 400 ``invalid_request``."""


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The bearer token of a request (lower-case header names), or None without one.

    Another scheme (``Basic ...``) counts as no bearer token. A repeated Authorization
    header arrives joined with ", " and so fails the token syntax: refused, never guessed.
    """
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, credentials = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    credentials = credentials.strip()
    if _B64TOKEN.fullmatch(credentials) is None:
        raise MalformedAuthorization("the bearer credential is not a b64token")
    return credentials


def credentials(headers: Mapping[str, str]) -> tuple[str, str] | None:
    """The scheme (``bearer`` or ``dpop``) and token of a request, or None without
    either; a token that is not a b64token is ``MalformedAuthorization``."""
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    scheme = scheme.lower()
    if scheme not in ("bearer", "dpop"):
        return None
    token = token.strip()
    if _B64TOKEN.fullmatch(token) is None:
        raise MalformedAuthorization(f"the {scheme} credential is not a b64token")
    return scheme, token


def check_scope_token(scope: str) -> str:
    """A scope name as RFC 6749 allows it (no space, quote or backslash), or ValueError."""
    if _SCOPE_TOKEN.fullmatch(scope) is None:
        raise ValueError(f"not a valid OAuth scope: {scope!r}")
    return scope


def challenge(
    *,
    resource_metadata: str,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
    scheme: str = "Bearer",
    algs: Iterable[str] = (),
) -> str:
    """A ``Bearer`` challenge: ``error`` first when there is one, then
    ``resource_metadata``, ``scope`` (sorted) and ``error_description`` (RFC 6750
    section 3, RFC 9728 section 5.1). Without an error (no credentials were sent) none
    is named, as RFC 6750 section 3.1 asks. ``scheme="DPoP"`` makes a DPoP challenge,
    which also names the proof algorithms it takes (``algs``, RFC 9449 section 7.1)."""
    params: list[tuple[str, str]] = []
    if error is not None:
        params.append(("error", check_scope_token(error)))
    if _QUOTABLE.fullmatch(resource_metadata) is None:
        raise ValueError(f"resource metadata URL cannot be quoted: {resource_metadata!r}")
    params.append(("resource_metadata", resource_metadata))
    scope = " ".join(check_scope_token(s) for s in sorted(set(scopes)))
    if scope:
        params.append(("scope", scope))
    if description is not None:
        if _DESCRIPTION.fullmatch(description) is None:
            raise ValueError(f"error description cannot be quoted: {description!r}")
        params.append(("error_description", description))
    algorithms = " ".join(check_scope_token(a) for a in algs)
    if algorithms:
        params.append(("algs", algorithms))
    return f"{scheme} " + ", ".join(f'{name}="{value}"' for name, value in params)
