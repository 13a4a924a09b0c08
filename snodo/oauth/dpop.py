"""DPoP (RFC 9449) for the client: a key of its own, a proof for every request, and
the nonces servers hand out.

A client with DPoP (``OAuth(dpop=True)``, or a ``DPoPKey`` it keeps) signs a proof for
its token request, and the authorization server binds the tokens to that key; from
then on every request to the MCP server presents the token under the ``DPoP`` scheme
with a fresh proof: this method (``htm``), this URI without query or fragment
(``htu``), now (``iat``), a new ``jti``, and the token's hash (``ath``). A server may ask
for its nonce in proofs (``use_dpop_nonce``, with a ``DPoP-Nonce`` header): the nonce is
kept per origin, put in the next proofs to that origin, and the refused request is sent
once more with it. The key's private half stays with the tokens (``Tokens.dpop_key``),
since a bound token is worth nothing without it. Signing is joserfc's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

try:
    from joserfc import jwt
    from joserfc.jwk import ECKey
except ImportError as exc:  # the base install: say which extra
    raise ImportError("snodo.oauth needs the snodo[auth] extra: pip install 'snodo[auth]'") from exc

from snodo.oauth.assertion import _CURVE_ALGORITHMS, PrivateKey, _load
from snodo.oauth.challenge import parse_challenge
from snodo.oauth.storage import Tokens

__all__ = ["DPoPKey", "DPoPNonces", "DPoPSession", "target"]

PROOF_TYPE = "dpop+jwt"


def target(url: str) -> str:
    """A request's URI as a proof names it (``htu``): no query, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


class DPoPKey:
    """The key a client proves possession of; a new P-256 key unless ``key`` is given
    (a joserfc key, a private JWK dict or PEM text: EC, RSA or OKP)."""

    def __init__(self, key: Any = None, *, algorithm: str | None = None) -> None:
        self.key: PrivateKey = ECKey.generate_key("P-256") if key is None else _load(key)
        public = self.key.as_dict(private=False)
        default = (
            "RS256" if public.get("kty") == "RSA" else _CURVE_ALGORITHMS.get(str(public.get("crv")))
        )
        if algorithm is None and default is None:
            raise ValueError(f"no default algorithm for curve {public.get('crv')!r}")
        self.algorithm: str = algorithm or str(default)
        self.public_jwk: dict[str, Any] = {
            k: v for k, v in public.items() if k in ("kty", "crv", "x", "y", "n", "e")
        }
        self.thumbprint: str = self.key.thumbprint()
        """RFC 7638: what a token bound to this key names as ``cnf.jkt``."""

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any]) -> DPoPKey:
        """The key kept with tokens (``private_jwk``)."""
        data = dict(jwk)
        algorithm = data.pop("alg", None)
        return cls(data, algorithm=algorithm if isinstance(algorithm, str) else None)

    def private_jwk(self) -> dict[str, Any]:
        """The key to keep with the tokens bound to it (secret as a refresh token is)."""
        return {**self.key.as_dict(private=True), "alg": self.algorithm}

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
        now: float | None = None,
    ) -> str:
        """A proof for one request (RFC 9449 section 4.2)."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": target(url),
            "iat": int(time.time() if now is None else now),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": PROOF_TYPE, "alg": self.algorithm, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self.key, algorithms=[self.algorithm])


class DPoPNonces:
    """The last nonce each origin handed out (RFC 9449 sections 8 and 9)."""

    def __init__(self) -> None:
        self._by_origin: dict[str, str] = {}

    def get(self, url: str) -> str | None:
        return self._by_origin.get(_origin(url))

    def note(self, url: str, headers: Mapping[str, str]) -> bool:
        """Keep a ``DPoP-Nonce`` the answer from ``url`` carries; whether it is new."""
        nonce = headers.get("dpop-nonce")
        if not nonce or len(nonce) > 512:
            return False
        origin = _origin(url)
        fresh = self._by_origin.get(origin) != nonce
        self._by_origin[origin] = nonce
        return fresh


def bound(tokens: Tokens | None) -> bool:
    """Whether ``tokens`` are DPoP-bound."""
    return tokens is not None and tokens.token_type.lower() == "dpop"


class DPoPSession:
    """What ``OAuth`` keeps for DPoP: its key (None: DPoP is off), the key its tokens
    are bound to as read back from them, and the servers' nonces."""

    def __init__(self, key: DPoPKey | None) -> None:
        self.key = key
        self.nonces = DPoPNonces()
        self._kept: tuple[str, DPoPKey] | None = None

    def bound_key(self, tokens: Tokens) -> DPoPKey | None:
        """The key ``tokens`` are bound to, as kept with them; None when it is lost."""
        if not tokens.dpop_key:
            return None
        kept = json.dumps(tokens.dpop_key, sort_keys=True)
        if self._kept is None or self._kept[0] != kept:
            try:
                self._kept = (kept, DPoPKey.from_jwk(tokens.dpop_key))
            except (ValueError, TypeError):
                return None
        return self._kept[1]

    def present(
        self, headers: MutableMapping[str, str], method: str, url: str, tokens: Tokens
    ) -> None:
        """``tokens`` on a request: ``Bearer``, or ``DPoP`` with a proof (RFC 9449
        section 7.1); a bound token whose key is lost is not sent at all."""
        headers.pop("dpop", None)
        if not bound(tokens):
            headers["authorization"] = f"Bearer {tokens.access_token}"
            return
        key = self.bound_key(tokens)
        if key is None:
            headers.pop("authorization", None)
            return
        headers["authorization"] = f"DPoP {tokens.access_token}"
        nonce = self.nonces.get(url)
        headers["dpop"] = key.proof(method, url, access_token=tokens.access_token, nonce=nonce)

    def nonce_asked(
        self, status: int, headers: Mapping[str, str], url: str, tokens: Tokens | None
    ) -> bool:
        """Keep any nonce an answer hands out; whether it refused a DPoP request for
        want of one (401 ``use_dpop_nonce`` with a new ``DPoP-Nonce``: sent again once)."""
        fresh = self.nonces.note(url, headers)
        if status != 401 or not bound(tokens) or not fresh:
            return False
        return parse_challenge(headers.get("www-authenticate")).error == "use_dpop_nonce"

    def proof_key(self, metadata: Mapping[str, Any], held: Tokens | None) -> DPoPKey | None:
        """The key a token request proves: the one ``held`` tokens are bound to (a
        refresh), else this client's, unless the authorization server lists DPoP
        algorithms without its algorithm."""
        if held is not None and bound(held):
            return self.bound_key(held)
        listed = metadata.get("dpop_signing_alg_values_supported")
        if self.key is None or (isinstance(listed, list) and self.key.algorithm not in listed):
            return None
        return self.key
