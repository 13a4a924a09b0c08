"""What an OAuth client keeps between requests: tokens, and its registrations.

Tokens and client registrations outlive one request and often one process, so where
they live is the application's choice: ``TokenStorage`` is the narrow interface, and
``MemoryTokenStorage`` keeps them for the life of the object. Registrations are keyed
by the authorization server's issuer: a client id one server issued means nothing to
another, and presenting it there would leak it (the authorization-server migration
rule of the authorization spec). Tokens remember their issuer and resource
for the same reason, and a DPoP-bound token the key it is bound to.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ClientInfo", "MemoryTokenStorage", "TokenStorage", "Tokens"]


@dataclass(frozen=True)
class ClientInfo:
    """A client's identity at one authorization server.

    ``auth_method`` is how it authenticates at the token endpoint:
    ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt`` (signed with
    the ``OAuth`` object's ``client_key``, never stored) or ``none``.
    """

    client_id: str
    client_secret: str | None = None
    auth_method: str = "none"


@dataclass(frozen=True)
class Tokens:
    """An access token response (RFC 6749 §5.1), with where it came from."""

    access_token: str
    issuer: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    scope: str | None = None
    expires_at: float | None = None
    resource: str | None = None
    dpop_key: dict[str, Any] | None = field(default=None, repr=False)
    """The private JWK of the key a DPoP-bound token (``token_type`` DPoP) is bound to,
    kept with it: the token is worth nothing without it (``snodo.oauth.dpop``)."""

    def expired(self, now: float | None = None, leeway: float = 30.0) -> bool:
        """True once the token is within ``leeway`` seconds of its expiry."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - leeway


class TokenStorage(Protocol):
    """Where ``OAuth`` keeps the client's tokens and its registrations, by issuer."""

    async def get_tokens(self) -> Tokens | None:
        """The tokens last set, or None when there are none."""
        ...

    async def set_tokens(self, tokens: Tokens | None) -> None:
        """Keep ``tokens`` in place of any held; None forgets them."""
        ...

    async def get_client(self, issuer: str) -> ClientInfo | None:
        """The registration last set for ``issuer``, or None; never another issuer's."""
        ...

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Keep ``client`` as the registration at ``issuer``; None forgets it."""
        ...


class MemoryTokenStorage:
    """Tokens and registrations in memory, gone with the object."""

    def __init__(self) -> None:
        self.tokens: Tokens | None = None
        self.clients: dict[str, ClientInfo] = {}

    async def get_tokens(self) -> Tokens | None:
        """The tokens last set, or None."""
        return self.tokens

    async def set_tokens(self, tokens: Tokens | None) -> None:
        """Keep ``tokens`` (None forgets them)."""
        self.tokens = tokens

    async def get_client(self, issuer: str) -> ClientInfo | None:
        """The registration at ``issuer``, or None."""
        return self.clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        """Keep ``client`` as the registration at ``issuer`` (None forgets it)."""
        if client is None:
            self.clients.pop(issuer, None)
        else:
            self.clients[issuer] = client
