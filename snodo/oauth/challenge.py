"""Bearer challenges: the parameters a resource server puts in ``WWW-Authenticate``.

A 401 or 403 from a protected MCP server names what the client needs next: where the
protected resource metadata lives (``resource_metadata``, RFC 9728 §5.1), which scopes
to ask for (``scope``, RFC 6750 §3) and why it refused (``error``, e.g.
``insufficient_scope``). The parser reads the ``Bearer`` challenge's auth-params
(RFC 9110 §11.2: token or quoted-string values) and ignores other schemes; a header it
cannot read yields an empty challenge, never an exception. A ``DPoP`` challenge (RFC
9449 section 7.1) is read alike, whichever of the two comes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["BearerChallenge", "parse_challenge"]

# One auth-param: name = token / quoted-string (with backslash escapes).
_PARAM = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*,?')
_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~\-]*)(?=\s|$|,)")


@dataclass(frozen=True)
class BearerChallenge:
    """What a ``Bearer`` challenge said; absent parameters are ``None``."""

    error: str | None = None
    error_description: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None
    scheme: str = "bearer"
    """``bearer`` or ``dpop``: which challenge these are the parameters of."""


def _params(text: str, start: int) -> tuple[dict[str, str], int]:
    params: dict[str, str] = {}
    pos = start
    while pos < len(text):
        match = _PARAM.match(text, pos)
        if match is None or match.end() == pos:
            break
        quoted = match.group(2)
        value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match.group(3) or ""
        params.setdefault(match.group(1).lower(), value)
        pos = match.end()
    return params, pos


def parse_challenge(header: str | None) -> BearerChallenge:
    """The first ``Bearer`` (or ``DPoP``) challenge in a ``WWW-Authenticate`` value."""
    if not header:
        return BearerChallenge()
    pos = 0
    while pos < len(header):
        scheme = _SCHEME.match(header, pos)
        if scheme is None:
            break
        params, end = _params(header, scheme.end())
        if scheme.group(1).lower() in ("bearer", "dpop"):
            return BearerChallenge(
                error=params.get("error"),
                error_description=params.get("error_description"),
                scope=params.get("scope") or None,
                resource_metadata=params.get("resource_metadata") or None,
                scheme=scheme.group(1).lower(),
            )
        if end == scheme.end():
            # A scheme with a token68 or nothing we can read: skip to the next comma.
            comma = header.find(",", end)
            if comma < 0:
                break
            end = comma + 1
        pos = end
    return BearerChallenge()
