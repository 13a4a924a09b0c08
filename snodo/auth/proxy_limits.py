"""The proxy's bounds on what anyone may leave in its store without signing in.

``/register`` and ``/authorize`` answer anyone, and each writes a record: without
bounds a stranger could fill the store. So a registration no sign-in ever completes
is forgotten after ``registration_lifetime`` (one that is used lives as long as its
grant may be refreshed, renewed at each use); at most ``max_registrations`` are made
per ``registration_window``, the next answered 429; and at most ``max_sign_ins``
sign-ins are begun per ten minutes (the time one waits for the provider), so no more
than twice that many wait at any moment, the next sent back to the client as
``temporarily_unavailable``. One client address has bounds of its own under those
(``..._per_address``), counted first, so one address alone cannot spend everyone's.
The counts are the store's (``ProxyStore.count``), so the bounds hold across the
workers sharing it.

What one registration or client-id metadata document may hold is bounded too (its
redirect URIs, their length, its size), and fetching a document is bounded in bytes
and time (``snodo.auth.proxy_documents``); each fetch counts as a sign-in begun from
the address that caused it, counted before anything is fetched.
"""

from __future__ import annotations

from dataclasses import dataclass

from snodo.auth.proxy_pages import OAuthRefusal

try:
    from snodo.auth.proxy_store import ProxyStore
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_limits needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

__all__ = ["SIGN_IN_TTL", "ProxyLimits"]

SIGN_IN_TTL = 600.0
"""Seconds from /authorize to the provider's callback."""


@dataclass(frozen=True, slots=True)
class ProxyLimits:
    """Bounds of the proxy's anonymous records; ``OAuthProxy(limits=...)``."""

    registration_lifetime: float = 86400.0
    """Seconds a registration no sign-in has completed is kept."""
    max_registrations: int = 1000
    """Registrations per ``registration_window``; 429 beyond."""
    registration_window: float = 3600.0
    max_registrations_per_address: int = 100
    """Registrations from one client address per ``registration_window``."""
    max_sign_ins: int = 10000
    """Sign-ins begun per ten minutes; ``temporarily_unavailable`` beyond."""
    max_sign_ins_per_address: int = 1000
    """Sign-ins begun from one client address per ten minutes."""
    max_redirect_uris: int = 10
    """Redirect URIs one registration or metadata document names."""
    max_redirect_uri_length: int = 2000
    """Characters of one redirect URI."""
    max_registration_bytes: int = 16 * 1024
    """Bytes of one ``/register`` request's body."""
    max_document_bytes: int = 16 * 1024
    """Bytes of a client-id metadata document (its draft's example bound is 5 KB)."""
    document_timeout: float = 5.0
    """Seconds one document fetch takes at most, from resolving its host to its last byte."""

    async def admit_registration(self, store: ProxyStore, address: str | None) -> None:
        """Count a registration; refuse it beyond the window's bounds."""
        window = self.registration_window
        if (
            address is not None
            and await _count(store, "registrations@" + address, window)
            > self.max_registrations_per_address
        ) or await _count(store, "registrations", window) > self.max_registrations:
            raise OAuthRefusal(
                "temporarily_unavailable",
                "too many registrations just now; try again later",
                429,
            )

    async def admit_sign_in(self, store: ProxyStore, address: str | None) -> None:
        """Count a sign-in begun; refuse it beyond the window's bounds."""
        if (
            address is not None
            and await _count(store, "sign-ins@" + address, SIGN_IN_TTL)
            > self.max_sign_ins_per_address
        ) or await _count(store, "sign-ins", SIGN_IN_TTL) > self.max_sign_ins:
            raise OAuthRefusal(
                "temporarily_unavailable", "too many sign-ins under way; try again later", 429
            )


async def _count(store: ProxyStore, what: str, window: float) -> int:
    """One more in the current window: from the first counted on, ``window`` seconds."""
    return await store.count("limit:" + what, window)
