"""First-party clients of the OAuth proxy: registered by its operator, not by strangers,
and trusted not to need the user's consent.

The consent page exists because anyone can register a client with the proxy and send
a user to ``/authorize``: the one registration the proxy holds at the provider must not
let an unknown client ride on a sign-in the user made for another (a confused deputy).
A client the operator lists here is not unknown: its id, its redirect URIs (compared
exactly) and its secret, if it has one, come from the operator's configuration, so the
operator has consented for the users, as a company does for its own applications. Its
users go straight to the provider. Anything else about the flow is unchanged: PKCE,
``state``, the resource, and the sign-in bound to the browser that began it.

Such a client also serves what needs a known client id: an identity assertion grant
(``snodo.auth.id_jag``) names the client it was issued to, and a test runner needs a
client it can complete the sign-in with.
"""

from __future__ import annotations

from dataclasses import dataclass

from snodo.auth.proxy_clients import Client, _redirect_uri_ok
from snodo.auth.proxy_store import digest

__all__ = ["FirstPartyClient"]

MAX_REDIRECT_URI = 2000
"""A listed redirect URI's length at most, as registrations have it by default."""


@dataclass(frozen=True, slots=True)
class FirstPartyClient:
    """A client the operator vouches for: ``OAuthProxy(first_party_clients=[...])``.

    ``secret`` makes it a confidential client (``client_secret_basic`` or ``_post``);
    without one it is public and proves itself by PKCE alone. Its users are not asked
    to consent.
    """

    client_id: str
    redirect_uris: tuple[str, ...] = ()
    name: str | None = None
    secret: str | None = None

    def __post_init__(self) -> None:
        if not self.client_id or len(self.client_id) > 2000:
            raise ValueError("a first-party client needs a client_id")
        object.__setattr__(self, "redirect_uris", tuple(self.redirect_uris))
        for uri in self.redirect_uris:
            if not _redirect_uri_ok(uri, MAX_REDIRECT_URI):
                raise ValueError(f"not a redirect URI a client may use: {uri!r}")
        if self.secret is not None and len(self.secret) < 16:
            raise ValueError("a first-party client's secret is at least 16 characters")

    def client(self) -> Client:
        """As the proxy's clients are known."""
        method = "none" if self.secret is None else "client_secret_basic"
        secret = None if self.secret is None else digest(self.secret)
        return Client(
            self.client_id, self.redirect_uris, method, secret, self.name or self.client_id
        )
