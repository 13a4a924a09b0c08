"""The user agent: who takes the authorization URL and comes back with the redirect.

In an application that is a browser and a local callback listener; the flow only
needs the URL the authorization server redirected to, so ``UserAgent`` is one method.
``HeadlessUserAgent`` serves tests and unattended runs against an authorization
server that approves without a login page: it requests the authorization URL and
follows redirects itself until one points at the redirect URI, without ever
requesting the redirect URI.
"""

from __future__ import annotations

from typing import Any, Protocol
from urllib.parse import urljoin

from snodo.oauth.errors import OAuthError

__all__ = ["HeadlessUserAgent", "UserAgent"]


class UserAgent(Protocol):
    """Takes the user to the authorization server and brings back its redirect."""

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        """Send the user to ``authorization_url``; return the URL the authorization
        server redirected back to (starting with ``redirect_uri``)."""
        ...


class HeadlessUserAgent:
    """Follows the authorization server's redirects without a browser or a person."""

    def __init__(
        self, *, max_redirects: int = 10, timeout: float = 10.0, transport: Any = None
    ) -> None:
        self.max_redirects = max_redirects
        self.timeout = timeout
        self.transport = transport  # an httpx.AsyncBaseTransport, for tests

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        """Follow redirects from ``authorization_url`` to the first one that starts with
        ``redirect_uri``, without requesting it; OAuthError if none does."""
        import httpx  # noqa: PLC0415 - optional dependency (snodo[auth])

        url = authorization_url
        async with httpx.AsyncClient(
            timeout=self.timeout, follow_redirects=False, transport=self.transport
        ) as client:
            for _ in range(self.max_redirects):
                response = await client.get(url)
                location: str | None = response.headers.get("location")
                if not response.is_redirect or not location:
                    raise OAuthError(
                        f"the authorization endpoint answered {response.status_code} "
                        "without redirecting back"
                    )
                url = urljoin(url, location)
                if url.startswith(redirect_uri):
                    return url
        raise OAuthError("too many redirects before the redirect URI")
