"""Whether the OAuth proxy asks a user before sending them to the provider, the page
that asks, and the answer.

The proxy holds one registration at the provider for every client, so a client nobody
vouched for must not ride on a sign-in: the user is shown a page naming the client and
where it will be sent back, and allows it or not. The page's form posts back with a
CSRF token bound to a cookie of the browser that was shown it, so another site cannot
make a browser allow a client its user never saw; the answer is remembered for that
client in that browser (a signed cookie, the latest ``MAX_REMEMBERED`` clients), so
the user is asked once per client.

The policy: a user is asked unless the client is a first-party one (listed by the
operator, ``snodo.auth.first_party``: the operator consented for its users) or this
browser already allowed it.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping

from snodo.auth.protected import Answer, EndpointRequest
from snodo.auth.proxy_clients import Client
from snodo.auth.proxy_limits import SIGN_IN_TTL
from snodo.auth.proxy_pages import (
    PAGE_HEADERS,
    BadForm,
    OAuthRefusal,
    Signer,
    consent_page,
    cookie,
    parse_form,
    read_cookie,
)

__all__ = ["CONSENT_COOKIE", "CSRF_COOKIE", "MAX_REMEMBERED", "Consent"]

CONSENT_COOKIE = "snodo_consent"
CSRF_COOKIE = "snodo_csrf"
MAX_REMEMBERED = 50
"""Clients one browser's consent cookie remembers (the latest)."""


class Consent:
    """The proxy's consent: who is asked, the page, and the answer's cookies."""

    def __init__(
        self,
        signer: Signer,
        *,
        server: str,
        resource: str,
        action: str,
        path: str,
        secure: bool,
        lifetime: float,
        first_party: Mapping[str, Client],
    ) -> None:
        self.signer = signer
        self.server = server
        self.resource = resource
        self.action = action
        self.path = path or "/"
        self.secure = secure
        self.lifetime = lifetime
        self.first_party = first_party

    def _remembered(self, headers: Mapping[str, str]) -> list[str]:
        found = self.signer.load("consent", read_cookie(headers, CONSENT_COOKIE))
        return [c for c in found if isinstance(c, str)] if isinstance(found, list) else []

    def given(self, headers: Mapping[str, str], client_id: str) -> bool:
        """Whether the user need not be asked for ``client_id``."""
        return client_id in self.first_party or client_id in self._remembered(headers)

    def page(
        self,
        headers: Mapping[str, str],
        client: Client,
        txn: str,
        redirect_uri: str,
        scopes: Iterable[str],
    ) -> Answer:
        """The page asking the user, with this browser's CSRF cookie set if it has none."""
        browser = read_cookie(headers, CSRF_COOKIE)
        answer_headers = list(PAGE_HEADERS)
        if not browser or len(browser) > 64:
            browser = secrets.token_urlsafe(24)
            set_cookie = cookie(
                CSRF_COOKIE, browser, path=self.path, secure=self.secure, max_age=int(SIGN_IN_TTL)
            )
            answer_headers.append((b"set-cookie", set_cookie))
        page = consent_page(
            client=client.name,
            client_id=client.client_id,
            server=self.server,
            resource=self.resource,
            redirect_uri=redirect_uri,
            scopes=scopes,
            action=self.action,
            txn=txn,
            csrf=self.signer.mac("csrf", f"{txn}|{browser}"),
        )
        return Answer(200, tuple(answer_headers), page, b"text/html; charset=utf-8")

    def answered(self, request: EndpointRequest) -> tuple[str, bool]:
        """The sign-in the form answers and whether the user allowed it; refused unless
        the form came from a page this browser was shown."""
        if request.method != "POST":
            raise OAuthRefusal("invalid_request", "use POST", 405)
        try:
            form = parse_form(request.body.decode("utf-8"))
        except (BadForm, UnicodeError):
            raise OAuthRefusal("invalid_request", "malformed form") from None
        txn = form.get("txn", "")
        browser = read_cookie(request.headers, CSRF_COOKIE) or ""
        if not browser or not self.signer.matches("csrf", f"{txn}|{browser}", form.get("csrf", "")):
            raise OAuthRefusal("invalid_request", "the consent form did not come from this page")
        return txn, form.get("decision") == "allow"

    def remember(self, headers: Mapping[str, str], client_id: str) -> bytes:
        """The cookie remembering that this browser allowed ``client_id``."""
        clients = [c for c in self._remembered(headers) if c != client_id]
        clients = [*clients[-(MAX_REMEMBERED - 1) :], client_id]
        value = self.signer.dump("consent", clients)
        return cookie(
            CONSENT_COOKIE, value, path=self.path, secure=self.secure, max_age=int(self.lifetime)
        )
