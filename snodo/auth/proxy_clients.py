"""Who the proxy's clients are: registered ones (RFC 7591) and client-id metadata
documents, and how a client proves itself at the token endpoint.

A registration is kept in the proxy's store (sealed, as every record), so any worker
knows a client another registered; its size, and its redirect URIs' number and length,
are bounded (``ProxyLimits``). A client whose id is an ``https:`` URL names its Client
ID Metadata Document: fetched within the rules of ``snodo.auth.proxy_documents`` (the
fetch counted as a sign-in begun, before it is made), its ``client_id`` checked to be
that very URL, its redirect URIs (bounded alike) taken as registered; such a client is
public (no secret) and proves itself by PKCE alone. Whatever makes a document unusable,
the client is told the same. Redirect URIs are compared exactly as registered.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from snodo.auth.protected import Answer

try:
    from snodo.auth.proxy_documents import DocumentFetcher, DocumentUnusable
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_clients needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing
from snodo.auth.proxy_limits import ProxyLimits
from snodo.auth.proxy_pages import OAuthRefusal, json_answer
from snodo.auth.proxy_store import ProxyStore, Vault, digest

__all__ = ["AUTH_METHODS", "Client", "Clients", "Records", "loopback", "server_metadata"]

log = logging.getLogger("snodo.auth")

AUTH_METHODS = ("none", "client_secret_post", "client_secret_basic")
UNUSABLE = "the client's metadata document could not be used"
"""What a client is told of any document that fails, fetched or read: nothing more."""
DOCUMENT_TTL = 300.0
"""Seconds a fetched client-id metadata document is trusted before it is fetched again."""
FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob"})


class Records:
    """Sealed JSON records in a ``ProxyStore``."""

    def __init__(self, store: ProxyStore, vault: Vault) -> None:
        self.store = store
        self.vault = vault

    async def put(self, key: str, record: dict[str, Any], ttl: float | None) -> None:
        await self.store.put(key, self.vault.seal(key, record), ttl)

    async def get(self, key: str) -> dict[str, Any] | None:
        return self.vault.open(key, await self.store.get(key))

    async def take(self, key: str) -> dict[str, Any] | None:
        return self.vault.open(key, await self.store.take(key))


def server_metadata(base: str, scopes_supported: Iterable[str]) -> dict[str, Any]:
    """The proxy's authorization server metadata (RFC 8414 section 2), its issuer
    ``base``: where clients register, and how they authenticate."""
    methods = list(AUTH_METHODS)
    document: dict[str, Any] = {
        "issuer": base,
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/token",
        "registration_endpoint": base + "/register",
        "revocation_endpoint": base + "/revoke",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": methods,
        "revocation_endpoint_auth_methods_supported": methods,
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
    }
    scopes = list(scopes_supported)
    if scopes:
        document["scopes_supported"] = scopes
    return document


def loopback(host: str | None) -> bool:
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _redirect_uris_ok(uris: Any, limits: ProxyLimits) -> bool:
    """A list of one to ``max_redirect_uris`` usable redirect URIs."""
    return (
        isinstance(uris, list)
        and 0 < len(uris) <= limits.max_redirect_uris
        and all(_redirect_uri_ok(uri, limits.max_redirect_uri_length) for uri in uris)
    )


def _redirect_uri_ok(uri: Any, max_length: int) -> bool:
    """Absolute, no fragment; ``https:``, ``http:`` on a loopback host only, or an
    application's own scheme (RFC 8252), never one a browser would run or read."""
    if not isinstance(uri, str) or not uri or len(uri) > max_length:
        return False
    parts = urllib.parse.urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme or parts.fragment or scheme in FORBIDDEN_SCHEMES:
        return False
    if scheme == "http":
        return loopback(parts.hostname)
    if scheme == "https":
        return bool(parts.hostname)
    return True


def is_document_url(client_id: str) -> bool:
    """Whether ``client_id`` names a client-id metadata document."""
    try:
        parts = urllib.parse.urlsplit(client_id)
    except ValueError:  # a bracketed host that is not one
        return False
    if parts.fragment or parts.username or parts.password or parts.path in ("", "/"):
        return False
    scheme = parts.scheme.lower()
    return (scheme == "https" and bool(parts.hostname)) or (
        scheme == "http" and loopback(parts.hostname)
    )


@dataclass(frozen=True, slots=True)
class Client:
    client_id: str
    redirect_uris: tuple[str, ...]
    auth_method: str
    secret_digest: str | None
    name: str


def _client(record: Mapping[str, Any]) -> Client:
    return Client(
        record["client_id"],
        tuple(record["redirect_uris"]),
        record["auth_method"],
        record.get("secret_digest"),
        record.get("name") or record["client_id"],
    )


class Clients:
    """Registration, lookup and authentication of the proxy's clients."""

    def __init__(self, records: Records, limits: ProxyLimits, loopback_documents: bool) -> None:
        self.records = records
        self.limits = limits
        self.documents = DocumentFetcher(
            limits.max_document_bytes, limits.document_timeout, loopback_documents
        )
        self.registration_ttl = limits.registration_lifetime
        self.first_party: Mapping[str, Client] = {}
        """Clients the operator listed (``snodo.auth.first_party``), by id."""
        self.grant_types: Iterable[str] = ("authorization_code", "refresh_token")
        """What a client may register for (the token endpoint's)."""

    async def register(self, body: bytes) -> Answer:
        """RFC 7591: the client's metadata checked, an id (and a secret unless it is a
        public client) issued."""
        limits = self.limits
        if len(body) > limits.max_registration_bytes:
            raise OAuthRefusal(
                "invalid_client_metadata",
                f"a registration is at most {limits.max_registration_bytes} bytes",
            )
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            raise OAuthRefusal("invalid_client_metadata", "the body is not a JSON object")
        uris = request.get("redirect_uris")
        if not _redirect_uris_ok(uris, limits):
            raise OAuthRefusal(
                "invalid_redirect_uri",
                f"redirect_uris must be a list of 1 to {limits.max_redirect_uris} absolute"
                f" URIs of at most {limits.max_redirect_uri_length} characters, without"
                " fragment: https, http on a loopback host, or an application's own scheme",
            )
        method = request.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in AUTH_METHODS:
            raise OAuthRefusal(
                "invalid_client_metadata",
                f"token_endpoint_auth_method must be one of {AUTH_METHODS}",
            )
        grants = request.get("grant_types", ["authorization_code"])
        if not isinstance(grants, list) or not set(grants) <= set(self.grant_types):
            raise OAuthRefusal(
                "invalid_client_metadata", "grant_types: " + ", ".join(sorted(self.grant_types))
            )
        if request.get("response_types", ["code"]) != ["code"]:
            raise OAuthRefusal("invalid_client_metadata", "response_types must be ['code']")
        name = request.get("client_name")
        name = name[:200] if isinstance(name, str) else None
        client_id = secrets.token_urlsafe(18)
        secret = None if method == "none" else secrets.token_urlsafe(32)
        record = {
            "client_id": client_id,
            "redirect_uris": uris,
            "auth_method": method,
            "secret_digest": None if secret is None else digest(secret),
            "name": name,
        }
        await self.records.put("client:" + client_id, record, self.registration_ttl)
        answer: dict[str, Any] = {
            "client_id": client_id,
            "client_id_issued_at": 0,
            "redirect_uris": uris,
            "token_endpoint_auth_method": method,
            "grant_types": grants,
            "response_types": ["code"],
        }
        if name is not None:
            answer["client_name"] = name
        if secret is not None:
            answer["client_secret"] = secret
            answer["client_secret_expires_at"] = 0
        return json_answer(201, answer)

    async def keep(self, client: Client, ttl: float) -> None:
        """A registered client that signed someone in, kept ``ttl`` seconds from now
        rather than forgotten as an unused registration is."""
        key = "client:" + client.client_id
        record = await self.records.get(key)
        if record is not None and self.registration_ttl is not None:
            await self.records.put(key, record, max(ttl, self.registration_ttl))

    async def find(self, client_id: str, address: str | None = None) -> Client | None:
        """The registered client, or the client its metadata document describes. A
        document not cached is fetched once the fetch is counted as a sign-in begun from
        ``address``."""
        if not client_id or len(client_id) > 2000:
            return None
        first = self.first_party.get(client_id)
        if first is not None:
            return first
        record = await self.records.get("client:" + client_id)
        if record is not None:
            return _client(record)
        if not is_document_url(client_id):
            return None
        key = "document:" + digest(client_id)
        cached = await self.records.get(key)
        if cached is not None:
            return _client(cached)
        await self.limits.admit_sign_in(self.records.store, address)
        try:
            found = self._document(client_id, await self.documents.fetch(client_id))
        except DocumentUnusable as unusable:
            log.info("client-id metadata document refused: %s", unusable)
            raise OAuthRefusal("invalid_client", UNUSABLE) from None
        await self.records.put(key, found, DOCUMENT_TTL)
        return _client(found)

    def _document(self, url: str, body: bytes) -> dict[str, Any]:
        """The client a fetched document describes (``DocumentUnusable`` otherwise)."""
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if not isinstance(document, dict) or document.get("client_id") != url:
            raise DocumentUnusable("it does not name its own URL as client_id")
        uris = document.get("redirect_uris")
        if not _redirect_uris_ok(uris, self.limits):
            raise DocumentUnusable("it has no usable redirect_uris")
        if document.get("token_endpoint_auth_method", "none") != "none":
            # A document is public: it can hold no secret this server could check.
            raise DocumentUnusable("its token_endpoint_auth_method is not none")
        name = document.get("client_name")
        return {
            "client_id": url,
            "redirect_uris": uris,
            "auth_method": "none",
            "name": name[:200] if isinstance(name, str) else None,
        }

    async def authenticate(
        self, form: Mapping[str, str], headers: Mapping[str, str], address: str | None = None
    ) -> Client:
        """The client of a token or revocation request from ``address``, its credentials
        checked (RFC 6749 section 2.3); ``invalid_client`` otherwise."""
        client_id, secret = form.get("client_id"), form.get("client_secret")
        basic = headers.get("authorization", "")
        if basic[:6].lower() == "basic ":
            try:
                import base64  # noqa: PLC0415 - only for this form

                pair = base64.b64decode(basic[6:].strip(), validate=True).decode()
                user, _, password = pair.partition(":")
                user = urllib.parse.unquote_plus(user)
                password = urllib.parse.unquote_plus(password)
            except ValueError:
                raise OAuthRefusal("invalid_client", "malformed Basic credentials", 401) from None
            if (client_id is not None and client_id != user) or secret is not None:
                raise OAuthRefusal("invalid_request", "client credentials given twice")
            client_id, secret = user, password
        if not client_id:
            raise OAuthRefusal("invalid_client", "no client_id", 401)
        try:
            client = await self.find(client_id, address)
        except OAuthRefusal as refusal:
            if refusal.error != "invalid_client":  # beyond the sign-in bounds: 429
                raise
            raise OAuthRefusal("invalid_client", refusal.description, 401) from None
        if client is None:
            raise OAuthRefusal("invalid_client", "unknown client", 401)
        if client.secret_digest is None:
            if secret:
                raise OAuthRefusal("invalid_client", "a public client holds no secret", 401)
            return client
        if not secret or not hmac.compare_digest(digest(secret), client.secret_digest):
            raise OAuthRefusal("invalid_client", "wrong client credentials", 401)
        return client
