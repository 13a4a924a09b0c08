"""The proxy's token endpoint (authorization code, refresh token) and revocation.

A code is taken from the store in one atomic step before anything is checked, so it
is redeemed once at most, on whichever worker, and a failed attempt (a wrong PKCE
verifier, another client, another redirect URI) spends it too. Each redeemed code
starts a token family: its access tokens name it, and they verify only while it is
alive. A refresh token is rotated on every use; the spent one is remembered, and
presenting it again (someone holds a copy) revokes the whole family. Revocation
(RFC 7009) ends the family of the token revoked, whichever kind it is.

A token request with a DPoP proof (``snodo.auth.dpop``) gets tokens bound to the
proof's key: the access token names it, and its refresh token is taken only with a
proof of the same key. An identity assertion grant (``snodo.auth.id_jag``) starts a
family that lives as long as its one access token, without a refresh token.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from snodo.auth.exchange import ExchangeRefused
from snodo.auth.protected import Answer, EndpointRequest

try:
    from snodo.auth.proxy_clients import Client, Clients, Records
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.proxy_grants needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing
from snodo.auth.proxy_pages import BadForm, OAuthRefusal, json_answer, parse_form
from snodo.auth.proxy_store import digest
from snodo.auth.proxy_tokens import TokenMinter, family_key
from snodo.auth.tokens import InvalidToken, canonical_resource

if TYPE_CHECKING:
    from snodo.auth.dpop import DPoP
    from snodo.auth.id_jag import IdentityAssertions

__all__ = ["Grants", "s256"]

log = logging.getLogger("snodo.auth")

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
"""RFC 7523's grant type, taken when the proxy has ``identity_assertion``."""

VERIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier`` (RFC 7636 section 4.2)."""
    hashed = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(hashed).decode().rstrip("=")


def _form(request: EndpointRequest) -> dict[str, str]:
    if request.method != "POST":
        raise OAuthRefusal("invalid_request", "use POST", 405)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        raise OAuthRefusal("invalid_request", "the body must be application/x-www-form-urlencoded")
    try:
        return parse_form(request.body.decode("utf-8"))
    except (BadForm, UnicodeError) as exc:
        raise OAuthRefusal("invalid_request", str(exc) or "malformed body") from None


def _proves(bound: Any, jkt: str | None) -> bool:
    """Whether a request proving ``jkt`` (or nothing) may use a refresh token bound to
    ``bound`` (or to no key)."""
    return bound is None or (jkt is not None and hmac.compare_digest(jkt, str(bound)))


class Grants:
    """Redeems codes and refresh tokens for the proxy's own tokens; revokes them."""

    def __init__(
        self,
        records: Records,
        clients: Clients,
        minter: TokenMinter,
        *,
        refresh_lifetime: float,
        token_endpoint: str = "",
        dpop: DPoP | None = None,
        assertions: IdentityAssertions | None = None,
        scopes_supported: Iterable[str] = (),
    ) -> None:
        self.records = records
        self.store = records.store
        self.clients = clients
        self.minter = minter
        self.refresh_lifetime = refresh_lifetime
        self.token_endpoint = token_endpoint
        self.dpop = dpop
        self.assertions = assertions
        self.scopes_supported = tuple(scopes_supported)
        self.types: tuple[str, ...] = ("authorization_code", "refresh_token")
        """The grant types taken."""
        if assertions is not None:
            self.types += (JWT_BEARER,)

    def metadata(self) -> dict[str, Any]:
        """What the authorization server metadata says of this endpoint beyond the
        code flow: the grant types, and DPoP's algorithms (RFC 9449 section 5.1)."""
        document: dict[str, Any] = {"grant_types_supported": list(self.types)}
        if self.dpop is not None:
            document.update(self.dpop.metadata())
        return document

    async def upstream_token(self, claims: Mapping[str, Any]) -> str:
        """The provider's access token held for the family of a token with ``claims``
        (what ``ctx.exchange_token`` trades: the proxy's own means nothing there)."""
        family = claims.get("fam")
        upstream = await self.records.get("upstream:" + family) if isinstance(family, str) else None
        access = None if upstream is None else upstream.get("access_token")
        if not isinstance(access, str) or not access:
            raise ExchangeRefused("invalid_grant", "no provider token is held for this caller")
        return access

    async def token(self, request: EndpointRequest) -> Answer:
        form = _form(request)
        client = await self.clients.authenticate(form, request.headers, request.address)
        grant = form.get("grant_type")
        # The proof first: a refused one spends no code (RFC 9449 section 5).
        jkt = None
        if self.dpop is not None:
            jkt = await self.dpop.token_request(request.headers, self.token_endpoint)
        if grant == "authorization_code":
            return await self._code(form, client, jkt)
        if grant == "refresh_token":
            return await self._refresh(form, client, jkt)
        if grant == JWT_BEARER and self.assertions is not None:
            return await self._assertion(form, client, jkt)
        raise OAuthRefusal(
            "unsupported_grant_type", "authorization_code and refresh_token are supported"
        )

    async def _assertion(self, form: Mapping[str, str], client: Client, jkt: str | None) -> Answer:
        """An identity assertion grant: a family living as long as its one token."""
        assert self.assertions is not None
        self._check_resource(form)
        claims, scopes = await self.assertions.accept(
            form,
            client.client_id,
            issuer=self.minter.issuer,
            resource=self.minter.resource,
            scopes_supported=self.scopes_supported,
            store=self.store,
        )
        lifetime = self.assertions.access_lifetime or self.minter.lifetime
        family = secrets.token_urlsafe(16)
        await self.store.put(family_key(family), b"1", lifetime)
        return await self._issue(client, claims, scopes, family, jkt, refresh=False, life=lifetime)

    async def _code(self, form: Mapping[str, str], client: Client, jkt: str | None) -> Answer:
        code = form.get("code")
        if not code:
            raise OAuthRefusal("invalid_request", "no code")
        record = await self.records.take("code:" + digest(code))  # spent, whatever follows
        if record is None:
            raise OAuthRefusal("invalid_grant", "the code is unknown, expired or already used")
        if record["client_id"] != client.client_id:
            raise OAuthRefusal("invalid_grant", "the code was issued to another client")
        if form.get("redirect_uri") != record["redirect_uri"]:
            raise OAuthRefusal("invalid_grant", "redirect_uri differs from the authorization's")
        verifier = form.get("code_verifier", "")
        if not 43 <= len(verifier) <= 128 or not set(verifier) <= VERIFIER_CHARS:
            raise OAuthRefusal("invalid_grant", "code_verifier is missing or malformed")
        if not hmac.compare_digest(s256(verifier), record["challenge"]):
            raise OAuthRefusal("invalid_grant", "code_verifier does not match the challenge")
        self._check_resource(form)
        await self.clients.keep(client, self.refresh_lifetime)  # used: no longer a stranger's
        family = secrets.token_urlsafe(16)
        await self.store.put(family_key(family), b"1", self.refresh_lifetime)
        # The provider's tokens stay here, sealed; the client never sees them.
        await self.records.put("upstream:" + family, record["upstream"], self.refresh_lifetime)
        return await self._issue(client, record["claims"], record["scopes"], family, jkt)

    async def _refresh(self, form: Mapping[str, str], client: Client, jkt: str | None) -> Answer:
        presented = form.get("refresh_token")
        if not presented:
            raise OAuthRefusal("invalid_request", "no refresh_token")
        key = digest(presented)
        # RFC 9449 section 5: a bound refresh token needs a proof of its key; one
        # presented without is refused before it is spent (its thief lacks the key).
        peeked = await self.records.get("refresh:" + key)
        if peeked is not None and not _proves(peeked.get("jkt"), jkt):
            raise OAuthRefusal("invalid_grant", "the refresh token needs a DPoP proof of its key")
        record = await self.records.take("refresh:" + key)
        if record is None:
            spent = await self.records.get("spent:" + key)
            if spent is not None:
                # A rotated token came back: a copy exists, so no token of its family
                # can be trusted any more.
                await self.store.delete(family_key(spent["family"]))
                log.warning("a spent refresh token was presented again: its grant is revoked")
            raise OAuthRefusal("invalid_grant", "the refresh token is unknown, expired or spent")
        family = record["family"]
        await self.records.put("spent:" + key, {"family": family}, self.refresh_lifetime)
        if record["client_id"] != client.client_id:
            await self.store.delete(family_key(family))
            raise OAuthRefusal("invalid_grant", "the refresh token was issued to another client")
        if await self.store.get(family_key(family)) is None:
            raise OAuthRefusal("invalid_grant", "the grant was revoked")
        bound = record.get("jkt")
        if not _proves(bound, jkt):
            raise OAuthRefusal("invalid_grant", "the refresh token needs a DPoP proof of its key")
        self._check_resource(form)
        await self.clients.keep(client, self.refresh_lifetime)
        scopes = list(record["scopes"])
        asked = form.get("scope")
        if asked is not None:
            if not set(asked.split()) <= set(scopes):
                raise OAuthRefusal("invalid_scope", "a refresh cannot widen the grant")
            scopes = asked.split()
        return await self._issue(client, record["claims"], scopes, family, bound or jkt)

    def _check_resource(self, form: Mapping[str, str]) -> None:
        resource = form.get("resource")
        if resource is not None and canonical_resource(resource) != canonical_resource(
            self.minter.resource
        ):
            raise OAuthRefusal("invalid_target", "this server issues tokens for its own resource")

    async def _issue(
        self,
        client: Client,
        claims: Mapping[str, Any],
        scopes: Iterable[str],
        family: str,
        jkt: str | None = None,
        *,
        refresh: bool = True,
        life: float | None = None,
    ) -> Answer:
        scopes = sorted(set(scopes))
        access, lifetime = self.minter.mint(claims, client.client_id, scopes, family, jkt, life)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer" if jkt is None else "DPoP",
            "expires_in": lifetime,
        }
        if refresh:
            token = secrets.token_urlsafe(32)
            record: dict[str, Any] = {"family": family, "client_id": client.client_id}
            record.update(scopes=scopes, claims=dict(claims))
            if jkt is not None:
                record["jkt"] = jkt
            await self.records.put("refresh:" + digest(token), record, self.refresh_lifetime)
            answer["refresh_token"] = token
        if scopes:
            answer["scope"] = " ".join(scopes)
        return json_answer(200, answer)

    async def revoke(self, request: EndpointRequest) -> Answer:
        """RFC 7009: the token's family ends; an unknown token is answered alike."""
        form = _form(request)
        client = await self.clients.authenticate(form, request.headers, request.address)
        token = form.get("token")
        if not token:
            raise OAuthRefusal("invalid_request", "no token")
        record = await self.records.get("refresh:" + digest(token))
        family: str | None = None
        if record is not None and record["client_id"] == client.client_id:
            family = record["family"]
            await self.store.delete("refresh:" + digest(token))
        elif record is None:
            try:
                claims = self.minter.claims(token)
            except InvalidToken:
                claims = {}
            if claims.get("client_id") == client.client_id:
                family = claims["fam"]
        if family is not None:
            await self.store.delete(family_key(family))
        return json_answer(200, {})
