"""Authorization server metadata (RFC 8414, OpenID Connect Discovery 1.0), fetched.

A verifier that knows only its issuer finds the issuer's ``jwks_uri`` and
``introspection_endpoint`` here. The well-known addresses are tried in the order
authorization-server-discovery.mdx gives, and a document is used only when its
``issuer`` is exactly the issuer asked for (RFC 8414 section 3.3), so a document served
for another issuer can never point a verifier at keys of someone else's choosing.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.discovery needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.tokens import VerifierUnavailable

__all__ = ["OutboundClient", "fetch_metadata", "metadata_urls", "published_endpoint"]

MAX_DOCUMENT_BYTES = 256 * 1024
"""A metadata document or key set larger than this is refused (real ones are a few KiB)."""


class OutboundClient:
    """The HTTP client a verifier fetches documents and keys with: the one it was given,
    or one made on first use (no redirects followed, 10 s timeout)."""

    def __init__(self, given: httpx.AsyncClient | None = None) -> None:
        self._http = given

    def __call__(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(timeout=10.0, follow_redirects=False)
        return self._http

    async def aclose(self) -> None:
        """Close the client, whether made here or given."""
        if self._http is not None:
            await self._http.aclose()


def metadata_urls(issuer: str) -> list[str]:
    """The addresses to try for ``issuer``, in order.

    With a path (``https://as.example/tenant``): OAuth with the suffix inserted, OpenID
    with the suffix inserted, OpenID appended. Without: OAuth, then OpenID.
    """
    parts = urllib.parse.urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [
            f"{origin}/.well-known/oauth-authorization-server",
            f"{origin}/.well-known/openid-configuration",
        ]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


async def get_json(client: httpx.AsyncClient, url: str) -> Any:
    """GET a JSON document; VerifierUnavailable when it cannot be had."""
    try:
        response = await client.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        raise VerifierUnavailable(f"GET {url}: {type(exc).__name__}") from exc
    if response.status_code != 200:
        raise VerifierUnavailable(f"GET {url}: HTTP {response.status_code}")
    if len(response.content) > MAX_DOCUMENT_BYTES:
        raise VerifierUnavailable(f"GET {url}: document too large")
    try:
        return response.json()
    except ValueError as exc:
        raise VerifierUnavailable(f"GET {url}: not JSON") from exc


async def fetch_metadata(client: httpx.AsyncClient, issuer: str) -> dict[str, Any]:
    """The first metadata document found for ``issuer`` whose ``issuer`` matches."""
    failures: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = await get_json(client, url)
        except VerifierUnavailable as exc:
            failures.append(str(exc))
            continue
        if not isinstance(document, dict) or document.get("issuer") != issuer:
            failures.append(f"GET {url}: issuer does not match")
            continue
        return document
    raise VerifierUnavailable(f"no metadata for {issuer}: " + "; ".join(failures))


async def published_endpoint(client: httpx.AsyncClient, issuer: str, name: str) -> str:
    """The URL ``issuer``'s metadata publishes as ``name`` (``jwks_uri``,
    ``introspection_endpoint``, ...); VerifierUnavailable when it publishes none."""
    found = (await fetch_metadata(client, issuer)).get(name)
    if not isinstance(found, str):
        raise VerifierUnavailable(f"{issuer} publishes no {name}")
    return found
