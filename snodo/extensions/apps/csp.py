"""Content Security Policy source expressions (CSP3, "Source lists"), as an MCP Apps
view names them in ``_meta.ui.csp``.

A host builds its frame's policy from these values, one directive per key, the values
joined by spaces; a value holding ``;`` would end the directive and start another (a
``script-src *`` of the server's choosing), a ``,`` a second policy, a space another
source. So every value must be one source expression of the grammar: a scheme-source
(``https:``), a host-source (``https://*.example.com:443/path``), a keyword in quotes
(``'self'``), a nonce or a hash source; ``'none'`` only alone. Both the server (at
registration) and the client (``snodo.extensions.apps.client.view_ui``) check with
``check_csp``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["check_csp", "source_problem"]

_SCHEME = r"[a-z][a-z0-9+.\-]*"
_HOST = r"(?:\*|(?:\*\.)?[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.?)"
_PORT = r"(?:[0-9]+|\*)"
# RFC 3986 pchar without ";" and "," (CSP3: they must be percent-encoded) and "'".
_PCHAR = r"(?:[a-z0-9\-._~!$&()*+=:@]|%[0-9a-f]{2})"
_PATH = rf"/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"
_BASE64 = r"[a-z0-9+/\-_]+={0,2}"
_KEYWORDS = (
    "self",
    "unsafe-inline",
    "unsafe-eval",
    "strict-dynamic",
    "unsafe-hashes",
    "report-sample",
    "unsafe-allow-redirects",
    "wasm-unsafe-eval",
)
_SOURCE = re.compile(
    "|".join(
        (
            rf"{_SCHEME}:",  # scheme-source
            rf"(?:{_SCHEME}://)?{_HOST}(?::{_PORT})?(?:{_PATH})?",  # host-source
            "'(?:" + "|".join(re.escape(k) for k in _KEYWORDS) + ")'",  # keyword-source
            rf"'nonce-{_BASE64}'",  # nonce-source
            rf"'(?:sha256|sha384|sha512)-{_BASE64}'",  # hash-source
        )
    ),
    re.ASCII | re.IGNORECASE,
)
_BREAKING = re.compile(r"[;,\s]")
MAX_SOURCE_CHARS = 2048
"""Longer than any real origin or hash; a longer value is refused."""


def source_problem(value: object) -> str | None:
    """Why ``value`` is not one CSP source expression, or None when it is."""
    if not isinstance(value, str):
        return "is not a string"
    if not value:
        return "is empty"
    if len(value) > MAX_SOURCE_CHARS:
        return f"is longer than {MAX_SOURCE_CHARS} characters"
    if _BREAKING.search(value):
        return "holds ';', ',' or whitespace, which would end the directive or the policy"
    if _SOURCE.fullmatch(value) is None:
        return (
            "is not a CSP source expression (a scheme such as https:, a host such as "
            "https://*.example.com, or a quoted keyword, nonce or hash)"
        )
    return None


def check_csp(csp: Mapping[str, Any]) -> None:
    """ValueError naming the first directive value that is not a source expression (or
    a directive whose values are not a list)."""
    for directive, values in csp.items():
        if isinstance(values, str) or not isinstance(values, list | tuple):
            raise ValueError(f"CSP {directive} must be a list of sources, not {values!r:.80}")
        for value in values:
            if isinstance(value, str) and value.lower() == "'none'":
                if len(values) > 1:
                    raise ValueError(f"CSP {directive}: 'none' stands alone or not at all")
                continue
            problem = source_problem(value)
            if problem is not None:
                raise ValueError(f"CSP {directive} value {value!r:.120} {problem}")
