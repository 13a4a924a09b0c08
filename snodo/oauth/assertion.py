"""``private_key_jwt``: a client proves who it is with a short JWT it signs (RFC 7523).

A machine client registered with a public key instead of a secret authenticates at
the token endpoint by sending ``client_assertion`` (a JWT signed with its private key)
and ``client_assertion_type``. The assertion's ``iss`` and ``sub`` are the client id;
its ``aud`` names the authorization server, as the token endpoint URL by default
(what most providers check) or its issuer (RFC 7523bis, which some newer servers
require, ``audience="issuer"``); a fresh ``jti`` and an ``exp`` a minute away keep a
captured assertion from being replayed for long. Nothing secret leaves the client.
The signing is joserfc's.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Literal

try:
    from joserfc import jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import ECKey, OKPKey, RSAKey
except ImportError as exc:  # the base install: say which extra
    raise ImportError("snodo.oauth needs the snodo[auth] extra: pip install 'snodo[auth]'") from exc

__all__ = ["ASSERTION_TYPE", "Audience", "ClientKey"]

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
Audience = Literal["token_endpoint", "issuer"]

PrivateKey = ECKey | RSAKey | OKPKey

_CURVE_ALGORITHMS = {
    "P-256": "ES256",
    "P-384": "ES384",
    "P-521": "ES512",
    "secp256k1": "ES256K",
    "Ed25519": "EdDSA",
    "Ed448": "EdDSA",
}


def _load(key: Any) -> PrivateKey:
    """A joserfc key from a joserfc key, a JWK (dict) or PEM text of a private key."""
    if isinstance(key, ECKey | RSAKey | OKPKey):
        loaded: PrivateKey = key
    else:
        if isinstance(key, dict):
            kinds: dict[str, type[PrivateKey]] = {"EC": ECKey, "RSA": RSAKey, "OKP": OKPKey}
            kind = kinds.get(str(key.get("kty")))
            candidates: tuple[type[PrivateKey], ...] = (kind,) if kind else ()
        elif isinstance(key, str | bytes):
            candidates = (ECKey, RSAKey, OKPKey)
        else:
            raise TypeError("private_key must be a joserfc key, a JWK dict or PEM text")
        loaded_or_none: PrivateKey | None = None
        for candidate in candidates:
            try:
                loaded_or_none = candidate.import_key(key)
                break
            except (JoseError, ValueError, TypeError):
                continue
        if loaded_or_none is None:
            raise ValueError("private_key is not an EC, RSA or OKP key joserfc can read")
        loaded = loaded_or_none
    if not loaded.is_private:
        raise ValueError("private_key holds only a public key: the client signs with it")
    return loaded


class ClientKey:
    """The key a client signs its assertions with, and how it names it.

    ``key``: a joserfc key, a JWK dict or PEM text (an EC, RSA or OKP private key).
    ``key_id`` is the ``kid`` the server knows the key by (the key's own ``kid`` when
    not given; none at all leaves the server to try each key the client registered).
    ``algorithm`` defaults from the key: ``RS256`` for RSA, ``ES256``/``ES384``/
    ``ES512`` by curve, ``EdDSA`` for Ed25519.
    """

    def __init__(
        self,
        key: Any,
        *,
        key_id: str | None = None,
        algorithm: str | None = None,
        audience: Audience = "token_endpoint",
        lifetime: int = 60,
    ) -> None:
        self.key = _load(key)
        self.key_id = key_id if key_id is not None else self.key.kid
        crv = self.key.as_dict(private=False).get("crv")
        default = "RS256" if isinstance(self.key, RSAKey) else _CURVE_ALGORITHMS.get(str(crv))
        if algorithm is None and default is None:
            raise ValueError(f"no default algorithm for curve {crv!r}: pass algorithm=")
        self.algorithm: str = algorithm or str(default)
        if audience not in ("token_endpoint", "issuer"):
            raise ValueError("audience must be 'token_endpoint' or 'issuer'")
        self.audience: Audience = audience
        if lifetime <= 0:
            raise ValueError("lifetime must be positive")
        self.lifetime = lifetime

    def assertion(
        self, client_id: str, token_endpoint: str, issuer: str, *, now: float | None = None
    ) -> str:
        """A signed assertion for one token request (RFC 7523 §3)."""
        issued = int(time.time() if now is None else now)
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": token_endpoint if self.audience == "token_endpoint" else issuer,
            "jti": secrets.token_urlsafe(24),
            "iat": issued,
            "exp": issued + self.lifetime,
        }
        header: dict[str, Any] = {"alg": self.algorithm, "typ": "JWT"}
        if self.key_id:
            header["kid"] = self.key_id
        return jwt.encode(header, claims, self.key, algorithms=[self.algorithm])

    def form(self, client_id: str, token_endpoint: str, issuer: str) -> dict[str, str]:
        """The token request's client authentication parameters."""
        return {
            "client_id": client_id,
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": self.assertion(client_id, token_endpoint, issuer),
        }
