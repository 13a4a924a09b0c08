"""``--token-file PATH``: bearer tokens an HTTP endpoint served by ``snodo run`` (or
``snodo proxy``, for its front) accepts, one a line.

The simplest protection there is, for a server on a shared host or a proxy in front of
a signed-in backend: a request without one of the tokens is answered 401 with a
``Bearer`` challenge. Each token is compared in constant time; its principal (what
legacy sessions and a proxy's fair shares are counted by) is a digest of it, never the
token. Lines that are empty or start with ``#`` are skipped. The file is read when each
worker starts; anyone who can read it holds every token, so it should be the owner's
alone (``chmod 600``), which is said once when it is not.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from snodo.transports.http import Unauthorized

__all__ = ["read_tokens", "token_file"]

ASKED = 'Bearer realm="snodo"'
"""The challenge to a request without a token (RFC 6750 section 3: no error code)."""
REFUSED = 'Bearer realm="snodo", error="invalid_token"'
"""The challenge to a request whose token is not one of the file's."""


def read_tokens(path: str) -> list[str]:
    """The tokens of ``path``; ValueError (one line) when it cannot be read or holds none."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--token-file {path}: {exc.strerror}") from None
    tokens = [line.strip() for line in text.splitlines()]
    tokens = [token for token in tokens if token and not token.startswith("#")]
    if not tokens:
        raise ValueError(f"--token-file {path} holds no token (one a line)")
    if any(len(token) < 16 for token in tokens):
        raise ValueError(f"--token-file {path}: a token is at least 16 characters")
    if sys.platform != "win32" and os.stat(path).st_mode & 0o077:
        logging.getLogger("snodo").warning(
            "snodo: %s can be read by other users, who would hold every token in it (chmod 600 %s)",
            path,
            path,
        )
    return tokens


def token_file(path: str) -> Callable[[Mapping[str, str]], str]:
    """An ``HttpApp(authenticate=...)`` hook accepting the bearer tokens of ``path``."""
    tokens = [(token.encode(), _principal(token)) for token in read_tokens(path)]

    def authenticate(headers: Mapping[str, str]) -> str:
        scheme, _, presented = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and presented:
            given = presented.strip().encode()
            found = None
            for token, principal in tokens:  # every one compared: no early way out
                if hmac.compare_digest(token, given):
                    found = principal
            if found is not None:
                return found
            raise Unauthorized(REFUSED)
        raise Unauthorized(ASKED)

    return authenticate


def _principal(token: str) -> str:
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]
