"""State keys: secrets checked once, key ids, fingerprints, and the AES key derived per secret.

``secret=`` is one key that seals under its fingerprint and opens a token naming any key
id (the id is under the MAC). ``keys=[(kid, secret), ...]`` is a keyring that seals with
its first key and opens with the key a token names, answering to its secrets'
fingerprints as well, so tokens move both ways between the two modes.

Encrypted tokens use AES-256-GCM from the optional ``cryptography`` package under a key
derived by HKDF-SHA256 (RFC 5869), so no secret is ever both an HMAC and an AES key.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from snodo.core.state.canonical import B64_ALPHABET, b64

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["MAX_KEYS", "MIN_SECRET_BYTES", "Key", "KeySet", "aead", "fingerprint", "key_set"]

MIN_SECRET_BYTES: Final = 32
"""256 bits: the HMAC-SHA256 output size (RFC 2104 section 3 key length advice)."""
MAX_KEYS: Final = 8
"""Most keys one keyring holds (ValueError beyond); a rotation needs two at a time."""
KID_MAX: Final = 32
_FINGERPRINT_LABEL: Final = b"snodo/state/kid"
_HKDF_INFO: Final = b"snodo/state/e1/aes-256-gcm"


@lru_cache(maxsize=1)
def aead() -> tuple[type[AESGCM], type[Exception]]:
    """AES-GCM and its authentication failure, imported on first use (an optional extra)."""
    try:
        # Lazy on purpose: readable tokens must not need the package.
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(
            "encrypted request state needs the cryptography package: "
            "pip install 'snodo[encrypted-state]'"
        ) from exc
    return AESGCM, InvalidTag


def encryption_key(secret: bytes) -> bytes:
    """HKDF-SHA256 (RFC 5869) of the secret: empty salt, info ``snodo/state/e1/aes-256-gcm``.

    One 32-byte output block: ``HMAC(HMAC(32 zero bytes, secret), info || 0x01)``. The
    secret itself stays the HMAC key of ``v1`` tokens and is never an AES key.
    """
    prk = hmac.digest(bytes(32), secret, "sha256")
    return hmac.digest(prk, _HKDF_INFO + b"\x01", "sha256")


_BLOCK: Final = 64
"""SHA-256's block size, the length HMAC pads its key to (RFC 2104 section 2)."""
_INNER_PAD: Final = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD: Final = bytes(byte ^ 0x5C for byte in range(256))


class Key:
    """One secret: HMAC-SHA256 keyed once and, once needed, a cipher."""

    __slots__ = ("_cipher", "_inner", "_outer", "secret")

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        # HMAC as RFC 2104 defines it, from two SHA-256 states that have absorbed the
        # padded key: each MAC copies them (one C call each), where the hmac module's
        # copy builds a Python object too and costs twice as much on every round.
        block = (secret if len(secret) <= _BLOCK else hashlib.sha256(secret).digest()).ljust(
            _BLOCK, b"\0"
        )
        self._inner = hashlib.sha256(block.translate(_INNER_PAD))
        self._outer = hashlib.sha256(block.translate(_OUTER_PAD))
        self._cipher: AESGCM | None = None

    def mac(self, message: bytes) -> bytes:
        """HMAC-SHA256 of ``message`` under this secret (``hmac.digest`` gives the same)."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.digest()

    def cipher(self) -> AESGCM:
        """The AES-256-GCM cipher under the derived key; ImportError without cryptography."""
        if self._cipher is None:
            self._cipher = aead()[0](encryption_key(self.secret))
        return self._cipher


class KeySet:
    """A validated secret or keyring."""

    __slots__ = ("any_kid", "by_kid", "seal_key", "seal_kid")

    def __init__(
        self,
        seal_kid: str,
        seal_key: Key,
        by_kid: dict[str, Key],
        any_kid: Key | None,
    ) -> None:
        self.seal_kid = seal_kid
        self.seal_key = seal_key
        self.by_kid = by_kid
        self.any_kid = any_kid
        """Set in ``secret=`` mode: the one key, tried whatever key id the token names."""

    def for_kid(self, kid: str) -> Key | None:
        if self.any_kid is not None:
            return self.any_kid if valid_kid(kid) else None
        return self.by_kid.get(kid)


def valid_kid(kid: object) -> bool:
    return isinstance(kid, str) and 0 < len(kid) <= KID_MAX and not kid.strip(B64_ALPHABET)


def check_secret(secret: object, where: str) -> bytes:
    if not isinstance(secret, bytes):
        raise TypeError(
            f"{where} must be bytes (decode hex/base64 text yourself, e.g. bytes.fromhex)"
        )
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(f"{where} must be at least {MIN_SECRET_BYTES} random bytes")
    return secret


def fingerprint(secret: bytes) -> str:
    """The key id ``secret=`` mode seals under: 12 base64url chars of an HMAC of a label.

    It names the key without revealing it, so a keyring holding the same secret under
    any id recognises tokens sealed in ``secret=`` mode.
    """
    check_secret(secret, "secret")
    return b64(hmac.digest(secret, _FINGERPRINT_LABEL, "sha256")[:9])


@lru_cache(maxsize=16)
def _single(secret: bytes) -> KeySet:
    key = Key(secret)
    return KeySet(fingerprint(secret), key, {}, key)


def _build_ring(keys: Sequence[object]) -> KeySet:
    if not 1 <= len(keys) <= MAX_KEYS:
        raise ValueError(f"keys must hold 1 to {MAX_KEYS} (id, secret) pairs")
    secrets: dict[str, bytes] = {}
    for entry in keys:
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise TypeError("each key must be an (id, secret) pair")
        kid, secret = entry
        if not isinstance(kid, str):
            raise TypeError("key ids must be strings")
        if not valid_kid(kid):
            raise ValueError(f"key id {kid!r} must be 1 to {KID_MAX} chars from A-Za-z0-9_-")
        if kid in secrets:
            raise ValueError(f"key id {kid!r} appears twice")
        secrets[kid] = check_secret(secret, f"secret of key {kid!r}")
    seal_kid = next(iter(secrets))
    for secret in list(secrets.values()):
        print_ = fingerprint(secret)
        if secrets.setdefault(print_, secret) != secret:
            raise ValueError(f"key id {print_!r} is the fingerprint of another key's secret")
    made: dict[bytes, Key] = {}  # one Key (and one derived cipher) per distinct secret
    by_kid = {kid: made.setdefault(secret, Key(secret)) for kid, secret in secrets.items()}
    return KeySet(seal_kid, by_kid[seal_kid], by_kid, None)


_ring = lru_cache(maxsize=16)(_build_ring)


def key_set(secret: object, keys: object) -> KeySet:
    """Exactly one of ``secret``/``keys``; validated once per distinct value (cached)."""
    if (secret is None) == (keys is None):
        raise TypeError("pass exactly one of secret= and keys=")
    if keys is None:
        return _single(check_secret(secret, "secret"))
    if not isinstance(keys, list | tuple):
        raise TypeError("keys must be a list of (id, secret) pairs")
    frozen = tuple(keys)
    try:
        hash(frozen)
    except TypeError:  # lists inside: fine, just not cacheable
        return _build_ring(frozen)
    return _ring(frozen)
