"""What the proxy's endpoints answer with: OAuth errors, redirects, signed cookies and
the consent page.

Every refusal is an OAuth error document (RFC 6749 section 5.2: ``error`` and
``error_description``), never a stack trace; answers carrying credentials are not to
be cached (``no-store``). The consent page is plain HTML with the names escaped, one
form that posts back with a CSRF token bound to a cookie of the browser that was shown
the page, so another site cannot make a browser approve a client its user never saw.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from snodo.auth.protected import Answer

__all__ = [
    "PAGE_HEADERS",
    "PREFLIGHT",
    "BadForm",
    "OAuthRefusal",
    "Signer",
    "consent_page",
    "cookie",
    "json_answer",
    "parse_form",
    "readable_anywhere",
    "redirect",
    "with_query",
]

PAGE_HEADERS = (
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'none'; style-src 'unsafe-inline';"
        b" form-action 'self' http: https:; frame-ancestors 'none'",
    ),
    (b"cache-control", b"no-store"),
)
"""A consent page is never framed (no clickjacking of its Allow button) nor cached."""
NO_STORE = ((b"cache-control", b"no-store"), (b"pragma", b"no-cache"))


class OAuthRefusal(Exception):
    """A request refused with an OAuth error (RFC 6749 sections 4.1.2.1 and 5.2)."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status

    @property
    def answer(self) -> Answer:
        extra: tuple[tuple[bytes, bytes], ...] = ()
        if self.status == 401:  # invalid_client (RFC 6749 section 5.2)
            extra = ((b"www-authenticate", b'Basic realm="token"'),)
        document = {"error": self.error, "error_description": self.description}
        return json_answer(self.status, document, extra)


class BadForm(ValueError):
    """A form body that is not one: undecodable, or a parameter given twice."""


def json_answer(
    status: int, document: Mapping[str, Any], extra: Iterable[tuple[bytes, bytes]] = ()
) -> Answer:
    body = json.dumps(dict(document), separators=(",", ":")).encode()
    return Answer(status, (*NO_STORE, *extra), body)


PREFLIGHT = Answer(
    204,
    (
        (b"access-control-allow-origin", b"*"),
        (b"access-control-allow-methods", b"GET, POST"),
        (b"access-control-allow-headers", b"authorization, content-type, dpop"),
        (b"access-control-max-age", b"600"),
    ),
    b"",
    b"text/plain",
)
"""The answer to a browser's preflight at an endpoint a web client calls itself."""


def readable_anywhere(answer: Answer) -> Answer:
    """``answer`` readable by a script of any origin: metadata, registration, token and
    revocation are called by browser-based clients, and carry no cookie (credentials
    travel in the body or the Authorization header, which CORS does not send alone)."""
    if any(name == b"access-control-allow-origin" for name, _ in answer.headers):
        return answer
    cors = (
        (b"access-control-allow-origin", b"*"),
        (b"access-control-expose-headers", b"dpop-nonce"),
    )
    return answer._replace(headers=(*answer.headers, *cors))


def redirect(url: str, cookies: Iterable[bytes] = ()) -> Answer:
    """A 302 to ``url``, setting ``cookies`` (whole Set-Cookie values)."""
    headers = [(b"location", url.encode()), *NO_STORE]
    headers.extend((b"set-cookie", value) for value in cookies)
    return Answer(302, tuple(headers), b"", b"text/plain")


def with_query(url: str, params: Mapping[str, str | None]) -> str:
    """``url`` with ``params`` added to its query (any it had kept, RFC 6749 3.1.2)."""
    parts = urllib.parse.urlsplit(url)
    added = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    query = f"{parts.query}&{added}" if parts.query else added
    return urllib.parse.urlunsplit(parts._replace(query=query))


def parse_form(text: str) -> dict[str, str]:
    """A query string or form body; a parameter given twice is refused (RFC 6749 3.1)."""
    try:
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True, strict_parsing=False)
    except (UnicodeError, ValueError) as exc:
        raise BadForm("undecodable parameters") from exc
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise BadForm(f"{name} given more than once")
        form[name] = value
    return form


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    """HMAC-signed values for cookies and CSRF tokens, under one purpose each."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def mac(self, purpose: str, value: str) -> str:
        message = f"{purpose}\x00{value}".encode()
        return _b64(hmac.new(self._key, message, hashlib.sha256).digest())

    def matches(self, purpose: str, value: str, mac: str) -> bool:
        return hmac.compare_digest(self.mac(purpose, value), mac)

    def dump(self, purpose: str, data: Any) -> str:
        text = _b64(json.dumps(data, separators=(",", ":")).encode())
        return f"{text}.{self.mac(purpose, text)}"

    def load(self, purpose: str, signed: str | None) -> Any:
        """What ``dump`` signed for ``purpose``, or None if absent, forged or garbled."""
        if not signed or "." not in signed:
            return None
        text, mac = signed.rsplit(".", 1)
        if not self.matches(purpose, text, mac):
            return None
        try:
            return json.loads(_unb64(text))
        except ValueError:
            return None


def read_cookie(headers: Mapping[str, str], name: str) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def cookie(name: str, value: str, *, path: str, secure: bool, max_age: int) -> bytes:
    """A Set-Cookie value: HttpOnly, SameSite=Lax (sent on the provider's redirect
    back, a top-level GET, and never on another site's POST)."""
    flags = f"{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax"
    return (flags + ("; Secure" if secure else "")).encode()


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Allow {client}?</title>
<style>body{{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem}}
code{{word-break:break-all}}button{{font-size:1rem;padding:.5rem 1.2rem;margin-right:1rem}}</style>
</head><body>
<h1>Allow {client} to use {server}?</h1>
<p>The application <strong>{client}</strong> (<code>{client_id}</code>) asks to act on
your behalf at <code>{resource}</code>{scopes}.</p>
<p>If you allow it, you sign in with your identity provider next, and the application
is sent back to <code>{redirect_uri}</code>. Allow it only if you started this and
trust that address.</p>
<form method="post" action="{action}">
<input type="hidden" name="txn" value="{txn}">
<input type="hidden" name="csrf" value="{csrf}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</body></html>
"""


def consent_page(
    *,
    client: str,
    client_id: str,
    server: str,
    resource: str,
    redirect_uri: str,
    scopes: Iterable[str],
    action: str,
    txn: str,
    csrf: str,
) -> bytes:
    """The consent page for one authorization, every value escaped."""
    shown = ", ".join(sorted(scopes))
    return PAGE.format(
        client=html.escape(client),
        client_id=html.escape(client_id),
        server=html.escape(server),
        resource=html.escape(resource),
        scopes=f" with the scopes <code>{html.escape(shown)}</code>" if shown else "",
        redirect_uri=html.escape(redirect_uri),
        action=html.escape(action),
        txn=html.escape(txn),
        csrf=html.escape(csrf),
    ).encode()
