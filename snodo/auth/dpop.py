"""DPoP (RFC 9449) for the server: proofs checked, tokens bound to a client's key.

Theory of operation. A DPoP client holds a key pair and signs a short JWT, the proof,
for each HTTP request: its method (``htm``), URI (``htu``), time (``iat``), a fresh
``jti``, the hash of the access token it presents (``ath``) and, when the server asks
for one, the server's ``nonce``; the public key rides in the proof's header. An
authorization server that sees a proof at its token endpoint binds the token it issues
to that key (``cnf.jkt``, the key's RFC 7638 thumbprint). A resource server then takes
such a token only with the ``DPoP`` scheme and a proof signed by that very key: a
stolen token is useless without the private key, and a captured proof is useless for
any other request, or twice.

``DPoP.check`` is RFC 9449 section 4.3 step by step: one proof, a JWS of type
``dpop+jwt`` signed with an asymmetric algorithm by the public key it carries, the
method and URI of this request, an ``iat`` within ``window`` seconds (``leeway`` ahead
for clocks), the token's hash, the nonce when ``nonce=True``, and a ``jti`` never seen
within the window. Seen proofs are counted in a ``ProxyStore`` (the OAuth proxy's own,
or one given), so a proof replayed to another worker sharing it is refused there too.
Nonces are not stored: each is a time window and an HMAC of it under the server's
secret, so every worker holding the secret issues and accepts the same ones, and they
rotate every ``nonce_lifetime`` seconds (the previous one is still taken).

Errors carry the names RFC 9449 gives them: ``invalid_dpop_proof``, and
``use_dpop_nonce`` with the nonce to use in a ``DPoP-Nonce`` header; a token bound to a
key but presented without its proof is ``invalid_token``. Signatures, key import and
thumbprints are joserfc's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

try:
    from joserfc import jws
    from joserfc import jwt as jose_jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import JWKRegistry
    from joserfc.jws import JWSRegistry
except ModuleNotFoundError as missing:  # pragma: no cover - a bare install
    raise ModuleNotFoundError(
        "snodo.auth.dpop needs the snodo[auth] extra: pip install 'snodo[auth]'"
    ) from missing

from snodo.auth.protected import Answer, ProofRefused
from snodo.auth.proxy_pages import OAuthRefusal
from snodo.auth.proxy_store import MemoryProxyStore, ProxyStore, derive, digest
from snodo.auth.tokens import bound_key

__all__ = [
    "ALGORITHMS",
    "DPoP",
    "DPoPRefusal",
    "Nonces",
    "Proof",
    "ProofRefused",
    "access_token_hash",
    "bound_key",
    "normal_htu",
]

ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
"""Asymmetric JWS algorithms a proof may use (RFC 9449 section 4.3; never ``none`` nor
an HMAC). EdDSA may be added through ``DPoP(algorithms=...)``."""
PROOF_TYPE = "dpop+jwt"
MAX_PROOF_CHARS = 8 * 1024
"""A proof longer than this is refused before it is parsed (an RSA-4096 one is ~1.5 KiB)."""
MAX_JTI_CHARS = 256


class _Proofs(JWSRegistry):
    """joserfc's rules for a proof: its header carries the public key (an RSA-4096
    one is about 1 KiB), so it may be longer than joserfc's default 512 bytes."""

    max_header_length = 2048


class DPoPRefusal(OAuthRefusal):
    """A token request refused for its proof (400), with ``DPoP-Nonce`` when the
    client is to retry with the nonce (RFC 9449 section 8)."""

    def __init__(self, refused: ProofRefused) -> None:
        super().__init__(refused.error, refused.description)
        self.nonce = refused.nonce

    @property
    def answer(self) -> Answer:
        answer = super().answer
        if self.nonce is None:
            return answer
        return answer._replace(headers=(*answer.headers, (b"dpop-nonce", self.nonce.encode())))


@dataclass(frozen=True, slots=True)
class Proof:
    """An accepted proof: the key's thumbprint, and the proof's claims."""

    jkt: str
    claims: Mapping[str, Any]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def access_token_hash(token: str) -> str:
    """``ath``: the base64url SHA-256 of the access token's ASCII (RFC 9449 section 4.2)."""
    return _b64(hashlib.sha256(token.encode("ascii")).digest())


def normal_htu(uri: str) -> str:
    """A URI as proofs are compared (RFC 9449 section 4.3, RFC 3986 section 6.2.3):
    scheme and host in lower case, no default port, no query or fragment, and a path
    without its trailing slash."""
    parts = urllib.parse.urlsplit(uri)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != {"http": 80, "https": 443}.get(scheme):
        host = f"{host}:{port}"
    return f"{scheme}://{host}{parts.path.rstrip('/')}"


class Nonces:
    """Server nonces without a store: a time window and its HMAC under ``key``.

    The one for the current window is issued; it and the previous window's are taken,
    so a nonce lives between ``lifetime`` and twice that.
    """

    def __init__(
        self, key: bytes, *, lifetime: float = 300.0, clock: Callable[[], float] = time.time
    ) -> None:
        if lifetime <= 0:
            raise ValueError("a nonce lifetime is positive")
        self._key = key
        self.lifetime = lifetime
        self.clock = clock

    def _window(self) -> int:
        return int(self.clock() // self.lifetime)

    def _for(self, window: int) -> str:
        mac = hmac.new(self._key, str(window).encode(), hashlib.sha256).digest()[:16]
        return f"{window:x}.{_b64(mac)}"

    def current(self) -> str:
        """The nonce to hand out now."""
        return self._for(self._window())

    def valid(self, nonce: Any) -> bool:
        """Whether ``nonce`` is this window's or the previous one's."""
        if not isinstance(nonce, str) or len(nonce) > 64:
            return False
        now = self._window()
        return any(hmac.compare_digest(nonce, self._for(w)) for w in (now, now - 1))


class DPoP:
    """DPoP for a resource (``ProtectedResource(dpop=...)``) and for the OAuth proxy's
    token endpoint (on by default there: ``OAuthProxy(dpop=...)``).

    ``store`` counts the proofs seen (every worker must share it; the proxy's store
    when none is given to the proxy, memory otherwise). ``secret`` makes the nonces
    (the workers share it too; a key of this process without). ``nonce=True`` asks
    every proof to carry a current nonce. ``required=True`` refuses bearer tokens: every
    request must come with a DPoP-bound token and its proof. ``window`` is how old a
    proof may be, ``leeway`` how far ahead of this server's clock.
    """

    def __init__(
        self,
        *,
        store: ProxyStore | None = None,
        secret: bytes | str | None = None,
        nonce: bool = False,
        required: bool = False,
        algorithms: Iterable[str] = ALGORITHMS,
        window: float = 300.0,
        leeway: float = 30.0,
        nonce_lifetime: float = 300.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.algorithms = tuple(algorithms)
        if not self.algorithms or any(a == "none" or a.startswith("HS") for a in self.algorithms):
            raise ValueError("DPoP proofs use asymmetric JWS algorithms")
        self.store: ProxyStore = store if store is not None else MemoryProxyStore()
        self.own_store = store is None
        self.own_secret = secret is None
        key = os.urandom(32) if secret is None else secret
        key = key.encode() if isinstance(key, str) else key
        self.nonces = Nonces(derive(key, "dpop-nonce"), lifetime=nonce_lifetime, clock=clock)
        self.nonce = nonce
        self.required = required
        self.window = window
        self.leeway = leeway
        self.clock = clock

    @classmethod
    def in_proxy(cls, option: DPoP | bool, store: ProxyStore, secret: bytes) -> DPoP | None:
        """The OAuth proxy's ``dpop=``: off, its defaults, or a configuration, with the
        proxy's store and secret where it was given none."""
        if option is False:
            return None
        return (cls() if option is True else option).for_proxy(store, secret)

    def for_proxy(self, store: ProxyStore, secret: bytes) -> DPoP:
        """This configuration with the proxy's store and secret where it gave none."""
        if not self.own_store and not self.own_secret:
            return self
        shared = DPoP(
            store=store if self.own_store else self.store,
            secret=secret if self.own_secret else None,
            nonce=self.nonce,
            required=self.required,
            algorithms=self.algorithms,
            window=self.window,
            leeway=self.leeway,
            nonce_lifetime=self.nonces.lifetime,
            clock=self.clock,
        )
        if not self.own_secret:
            shared.nonces = self.nonces
            shared.own_secret = False
        return shared

    def unshared(self) -> str | None:
        """What several workers cannot share: proofs counted in memory, or nonces of a
        key of this process."""
        if self.own_store:
            return "counts DPoP proofs in this process's memory (DPoP(store=))"
        if self.nonce and self.own_secret:
            return "makes DPoP nonces with a key of this process (DPoP(secret=))"
        return None

    def metadata(self) -> dict[str, Any]:
        """What resource and authorization server metadata say of DPoP (RFC 9449
        sections 5.1 and 7.1)."""
        return {"dpop_signing_alg_values_supported": list(self.algorithms)}

    # -- one proof ----------------------------------------------------------------------

    async def check(
        self, value: str | None, method: str, uri: str, access_token: str | None = None
    ) -> Proof:
        """The proof in a request's ``DPoP`` header (its value, the header joined when
        repeated) checked for ``method`` and ``uri``, and ``access_token`` when one is
        presented; ``ProofRefused`` otherwise. Counted as seen once accepted."""
        if not value:
            raise ProofRefused("invalid_dpop_proof", "no DPoP proof")
        if "," in value or len(value) > MAX_PROOF_CHARS:
            raise ProofRefused("invalid_dpop_proof", "one DPoP proof of a sane size")
        try:
            header = jws.extract_compact(value.strip().encode("ascii"), None, _Proofs()).headers()
        except (JoseError, ValueError, UnicodeError):
            raise ProofRefused("invalid_dpop_proof", "the proof is not a JWS") from None
        if header.get("typ") != PROOF_TYPE:
            raise ProofRefused("invalid_dpop_proof", "the proof's typ is not dpop+jwt")
        algorithm = header.get("alg")
        if algorithm not in self.algorithms:
            raise ProofRefused("invalid_dpop_proof", f"algorithm {algorithm!r} is not allowed")
        jwk = header.get("jwk")
        if not isinstance(jwk, dict) or jwk.get("kty") not in ("EC", "RSA", "OKP"):
            raise ProofRefused("invalid_dpop_proof", "the proof carries no public key")
        try:
            key = JWKRegistry.import_key(jwk)
        except (JoseError, ValueError, TypeError, KeyError):
            raise ProofRefused("invalid_dpop_proof", "the proof's key is unreadable") from None
        if key.is_private:
            raise ProofRefused("invalid_dpop_proof", "the proof's header holds a private key")
        try:
            registry = _Proofs(algorithms=[str(algorithm)])
            claims: dict[str, Any] = dict(
                jose_jwt.decode(value.strip(), key, registry=registry).claims
            )
        except (JoseError, ValueError, TypeError):
            raise ProofRefused("invalid_dpop_proof", "the proof's signature is wrong") from None
        self._check_claims(claims, method, uri, access_token)
        jkt = key.thumbprint()
        seen = await self.store.count("dpop:" + digest(f"{jkt}|{claims['jti']}"), self._memory())
        if seen > 1:
            raise ProofRefused("invalid_dpop_proof", "the proof was used before")
        return Proof(jkt, claims)

    def _memory(self) -> float:
        """How long a seen proof is remembered: as long as it could be taken."""
        return self.window + 2 * self.leeway

    def _check_claims(
        self, claims: Mapping[str, Any], method: str, uri: str, access_token: str | None
    ) -> None:
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > MAX_JTI_CHARS:
            raise ProofRefused("invalid_dpop_proof", "the proof has no jti")
        if claims.get("htm") != method:
            raise ProofRefused("invalid_dpop_proof", "htm is not this request's method")
        htu = claims.get("htu")
        if (
            not isinstance(htu, str)
            or "?" in htu
            or "#" in htu
            or normal_htu(htu) != (normal_htu(uri))
        ):
            raise ProofRefused("invalid_dpop_proof", "htu is not this request's URI")
        issued = claims.get("iat")
        now = self.clock()
        if (
            not isinstance(issued, int | float)
            or isinstance(issued, bool)
            or not now - self.window <= issued <= now + self.leeway
        ):
            raise ProofRefused("invalid_dpop_proof", "iat is missing or out of the window")
        if access_token is not None:
            ath = claims.get("ath")
            if not isinstance(ath, str) or not hmac.compare_digest(
                ath, access_token_hash(access_token)
            ):
                raise ProofRefused("invalid_dpop_proof", "ath is not the token's hash")
        if self.nonce and not self.nonces.valid(claims.get("nonce")):
            raise ProofRefused(
                "use_dpop_nonce", "the proof needs the server's nonce", self.nonces.current()
            )

    # -- the two places a proof is checked ------------------------------------------------

    async def token_request(self, headers: Mapping[str, str], token_endpoint: str) -> str | None:
        """The key a token request proves (its thumbprint), or None without a proof;
        a bad proof is ``DPoPRefusal`` (400, RFC 9449 section 5)."""
        value = headers.get("dpop")
        if value is None:
            return None
        try:
            return (await self.check(value, "POST", token_endpoint)).jkt
        except ProofRefused as refused:
            raise DPoPRefusal(refused) from None

    async def resource_request(
        self,
        headers: Mapping[str, str],
        method: str,
        uri: str,
        scheme: str,
        token: str,
        bound: str | None,
    ) -> None:
        """A request to the resource with a verified ``token`` (``bound`` to a key or
        not) presented under ``scheme`` (``bearer`` or ``dpop``): ``ProofRefused``
        unless the scheme, the binding and the proof agree (RFC 9449 section 7)."""
        if scheme == "bearer":
            if bound is not None:
                raise ProofRefused("invalid_token", "a DPoP-bound token needs the DPoP scheme")
            if self.required:
                raise ProofRefused("invalid_token", "this resource takes DPoP-bound tokens only")
            return
        if bound is None:
            raise ProofRefused("invalid_token", "the token is not bound to a DPoP key")
        proof = await self.check(headers.get("dpop"), method, uri, token)
        if not hmac.compare_digest(proof.jkt, bound):
            raise ProofRefused("invalid_dpop_proof", "the proof's key is not the token's")
