"""Sealed request state for multi round-trip requests (MRTR).

Theory of operation
-------------------
A server that answers ``input_required`` may hand the client a ``requestState`` string,
and the client echoes it on the retry. basic/patterns/mrtr.mdx says that string is
attacker-controlled: if it steers anything, the server MUST protect its integrity and
SHOULD bind it to the principal, a short expiry and the originating request. ``seal``
and ``open`` do exactly that, and nothing else:

* The default token is signed, not encrypted: ``v1.<kid>.<payload>.<mac>``, where
  ``payload`` is base64url of canonical JSON ``{"data": ..., "exp": ..., "iat": ...}``.
  Never put secrets in it.
* The MAC is HMAC-SHA256 over ``v1.<kid>.<payload>.<binding>``. ``binding`` is the
  base64url SHA-256 of canonical JSON ``[method, principal, salient params]``. It never
  travels: the opener recomputes it from the retry, so a token replayed on another
  method, other arguments or by another principal fails the MAC like a forgery does.
  Salient params are the request params minus the top-level ``_meta``,
  ``inputResponses`` and ``requestState``, which legitimately change between rounds.
* Canonical JSON: keys sorted by code point, no whitespace, UTF-8, ``1``, ``1.0`` and
  ``true`` kept distinct, NaN and infinities refused (docs/state-token.md has the exact
  rules and test vectors).
* ``open`` checks the cheap things first (size, shape, key id), then the MAC in constant
  time, and only then parses JSON and compares times. Every failure raises the same
  ``InvalidState``, so a forger learns nothing about which check stopped it.
* Keys: ``secret=`` or a keyring ``keys=[(kid, secret), ...]``. A keyring seals with its
  first key and opens with the key the token names. ``secret=`` seals under a key id
  derived from the secret (its fingerprint) and opens a token naming any key id, since
  the key id is under the MAC. A keyring answers to its keys' fingerprints as well as
  their ids, so tokens move both ways between the two modes and key rotation needs no
  synchronised switch.
* Encrypted tokens (``seal(..., encrypted=True)``, optional ``cryptography`` package) are
  ``e1.<kid>.<box>``: ``box`` is base64url of a random 96-bit nonce followed by the
  AES-256-GCM encryption of the same payload, with ``e1.<kid>.<binding>`` as associated
  data. So the binding, key ids, keyrings, expiry and the one error work as for ``v1``;
  only the payload is hidden. The AES key is HKDF-SHA256 of the secret (RFC 5869), so
  the secret is never used as both HMAC and AES key. ``open`` takes either format,
  which lets a fleet switch ``encrypted`` on or off node by node.
* One-time tokens (``seal(..., once=True)``) carry ``"jti"``, 128 random bits, in the
  payload. Replay within the lifetime is otherwise possible (mrtr.mdx: at-most-once
  consumption MUST be enforced server-side), so ``open`` refuses them and ``open_once``
  verifies exactly as ``open`` does, then asks a ``snodo.replay.ReplayGuard`` to consume
  the id: the second presentation fails with the same InvalidState. ``open_once``
  refuses tokens without an id, so a guarded opener never accepts a replayable token.

Apart from the guard, which the caller supplies, this module does no I/O; the time comes
from ``ctx.clock()`` and randomness from ``os.urandom`` (a parameter, for test vectors).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, Protocol

from snodo.errors import InvalidState

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from snodo.replay import ReplayGuard

__all__ = [
    "CLOCK_SKEW",
    "DEFAULT_TTL",
    "MAX_DATA_DEPTH",
    "MAX_KEYS",
    "MAX_TOKEN_LENGTH",
    "MAX_TTL",
    "MIN_SECRET_BYTES",
    "StateContext",
    "check_options",
    "fingerprint",
    "inspect",
    "open",
    "open_once",
    "seal",
]

VERSION: Final = "v1"
ENCRYPTED_VERSION: Final = "e1"
DEFAULT_TTL: Final = 300
"""Seconds; the Elixir Snodo default (seeds, "State and effects")."""
MAX_TTL: Final = 900
"""Seconds; long enough for a person to answer a form, short enough to bound replay."""
CLOCK_SKEW: Final = 60
"""Seconds an issued-at may lie ahead of the opener's clock (nodes' clocks differ)."""
MAX_TOKEN_LENGTH: Final = 8192
"""Characters (= bytes: tokens are ASCII). Within common 8 KiB header-line limits too."""
MAX_DATA_DEPTH: Final = 32
"""Nesting levels of arrays/objects in ``data``; a scalar is depth 0."""
MIN_SECRET_BYTES: Final = 32
"""256 bits: the HMAC-SHA256 output size (RFC 2104 section 3 key length advice)."""
MAX_KEYS: Final = 8
ONCE_ID_BYTES: Final = 16
"""128 bits: random ids that never collide in practice, however many tokens are sealed."""
NONCE_BYTES: Final = 12
"""96 bits: the GCM nonce length NIST SP 800-38D section 8.2 recommends."""
TAG_BYTES: Final = 16
"""The full 128-bit GCM tag (cryptography's AESGCM default and only choice)."""

_KID_CHARS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
"""Also exactly the base64url alphabet (RFC 4648 section 5)."""
_KID_MAX: Final = 32
_FINGERPRINT_LABEL: Final = b"snodo/state/kid"
_HKDF_INFO: Final = b"snodo/state/e1/aes-256-gcm"
_UNBOUND: Final = frozenset(("_meta", "inputResponses", "requestState"))
_PAYLOAD_KEYS: Final = frozenset(("data", "exp", "iat"))
_ONCE_PAYLOAD_KEYS: Final = frozenset(("data", "exp", "iat", "jti"))
_JTI_LENGTH: Final = 22
"""base64url of the 16-byte id, unpadded."""
_SHAPES: Final = frozenset(((VERSION, 4), (ENCRYPTED_VERSION, 3)))

# One encoder for every canonical text: sorted keys, no whitespace, raw UTF-8, no NaN.
# check_circular is off because cycles are caught elsewhere (depth walk, RecursionError).
_encode = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    check_circular=False,
).encode


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


_decode = json.JSONDecoder(parse_constant=_refuse_constant).decode

# A JSON string literal, to blank out before counting brackets.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class StateContext(Protocol):
    """What sealing needs from a request; ``snodo.context.Context`` satisfies it."""

    @property
    def request_method(self) -> str: ...

    @property
    def request_params(self) -> Mapping[str, Any]: ...

    @property
    def clock(self) -> Callable[[], float]: ...


@lru_cache(maxsize=1)
def _aead() -> tuple[type[AESGCM], type[Exception]]:
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


def _encryption_key(secret: bytes) -> bytes:
    """HKDF-SHA256 (RFC 5869) of the secret: empty salt, info ``snodo/state/e1/aes-256-gcm``.

    One 32-byte output block: ``HMAC(HMAC(32 zero bytes, secret), info || 0x01)``. The
    secret itself stays the HMAC key of ``v1`` tokens and is never an AES key.
    """
    prk = hmac.digest(bytes(32), secret, "sha256")
    return hmac.digest(prk, _HKDF_INFO + b"\x01", "sha256")


class _Key:
    """One secret: a pre-keyed HMAC state (copying one is cheap) and, once needed, a cipher."""

    __slots__ = ("_cipher", "mac", "secret")

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.mac = _hmac(secret)
        self._cipher: AESGCM | None = None

    def cipher(self) -> AESGCM:
        """The AES-256-GCM cipher under the derived key; ImportError without cryptography."""
        if self._cipher is None:
            self._cipher = _aead()[0](_encryption_key(self.secret))
        return self._cipher


class _Keys:
    """A validated secret or keyring."""

    __slots__ = ("any_kid", "by_kid", "seal_key", "seal_kid")

    def __init__(
        self,
        seal_kid: str,
        seal_key: _Key,
        by_kid: dict[str, _Key],
        any_kid: _Key | None,
    ) -> None:
        self.seal_kid = seal_kid
        self.seal_key = seal_key
        self.by_kid = by_kid
        self.any_kid = any_kid
        """Set in ``secret=`` mode: the one key, tried whatever key id the token names."""

    def for_kid(self, kid: str) -> _Key | None:
        if self.any_kid is not None:
            return self.any_kid if _valid_kid(kid) else None
        return self.by_kid.get(kid)


_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")


def _b64(raw: bytes) -> str:
    """base64url without padding (RFC 4648 section 5), one C call per step."""
    return binascii.b2a_base64(raw, newline=False).rstrip(b"=").translate(_URLSAFE).decode()


def _unb64(text: str) -> bytes:
    """Inverse of ``_b64``; ValueError (binascii.Error) on a length no encoding has."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _valid_kid(kid: object) -> bool:
    return isinstance(kid, str) and 0 < len(kid) <= _KID_MAX and not kid.strip(_KID_CHARS)


def _check_secret(secret: object, where: str) -> bytes:
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
    _check_secret(secret, "secret")
    return _b64(hmac.digest(secret, _FINGERPRINT_LABEL, "sha256")[:9])


def _hmac(secret: bytes) -> hmac.HMAC:
    return hmac.new(secret, digestmod=hashlib.sha256)


@lru_cache(maxsize=16)
def _single(secret: bytes) -> _Keys:
    key = _Key(secret)
    return _Keys(fingerprint(secret), key, {}, key)


def _build_ring(keys: Sequence[object]) -> _Keys:
    if not 1 <= len(keys) <= MAX_KEYS:
        raise ValueError(f"keys must hold 1 to {MAX_KEYS} (id, secret) pairs")
    secrets: dict[str, bytes] = {}
    for entry in keys:
        if not isinstance(entry, tuple | list) or len(entry) != 2:
            raise TypeError("each key must be an (id, secret) pair")
        kid, secret = entry
        if not isinstance(kid, str):
            raise TypeError("key ids must be strings")
        if not _valid_kid(kid):
            raise ValueError(f"key id {kid!r} must be 1 to {_KID_MAX} chars from A-Za-z0-9_-")
        if kid in secrets:
            raise ValueError(f"key id {kid!r} appears twice")
        secrets[kid] = _check_secret(secret, f"secret of key {kid!r}")
    seal_kid = next(iter(secrets))
    for secret in list(secrets.values()):
        print_ = fingerprint(secret)
        if secrets.setdefault(print_, secret) != secret:
            raise ValueError(f"key id {print_!r} is the fingerprint of another key's secret")
    made: dict[bytes, _Key] = {}  # one _Key (and one derived cipher) per distinct secret
    by_kid = {kid: made.setdefault(secret, _Key(secret)) for kid, secret in secrets.items()}
    return _Keys(seal_kid, by_kid[seal_kid], by_kid, None)


_ring = lru_cache(maxsize=16)(_build_ring)


def _keys(secret: object, keys: object) -> _Keys:
    """Exactly one of ``secret``/``keys``; validated once per distinct value (cached)."""
    if (secret is None) == (keys is None):
        raise TypeError("pass exactly one of secret= and keys=")
    if keys is None:
        return _single(_check_secret(secret, "secret"))
    if not isinstance(keys, list | tuple):
        raise TypeError("keys must be a list of (id, secret) pairs")
    frozen = tuple(keys)
    try:
        hash(frozen)
    except TypeError:  # lists inside: fine, just not cacheable
        return _build_ring(frozen)
    return _ring(frozen)


def _lifetime(ttl: object) -> int:
    """ttl rounded up to whole seconds, the lifetime written into (and accepted from) tokens."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        raise TypeError("ttl must be a number of seconds")
    if not 0 < ttl <= MAX_TTL:  # NaN fails this too
        raise ValueError(f"ttl must be more than 0 and at most {MAX_TTL} seconds")
    return math.ceil(ttl)


def _check_principal(principal: object) -> None:
    if principal is not None and not isinstance(principal, str):
        raise TypeError("principal must be a string, or None for anonymous")


def _check_encrypted(encrypted: object) -> None:
    if not isinstance(encrypted, bool):
        raise TypeError("encrypted must be True or False")
    if encrypted:
        _aead()  # ImportError naming the extra, at start-up rather than on a request


def check_options(
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
    encrypted: bool = False,
) -> None:
    """Raise the TypeError/ValueError ``seal``/``open`` would, so servers fail at start-up.

    With ``encrypted=True`` also the ImportError of a missing ``cryptography`` package.
    """
    _keys(secret, keys)
    _lifetime(ttl)
    _check_principal(principal)
    _check_encrypted(encrypted)


def _check_data(value: object, depth: int) -> None:
    """Refuse anything that is not exactly JSON, so what ``open`` returns equals ``data``.

    json.dumps would quietly turn tuples into arrays and int keys into strings, and
    subclasses (bool is an int) would blur the numeric types the encoding keeps apart.
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return
    if kind is float and isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("data must not contain NaN or infinities")
        return
    if kind is dict and isinstance(value, dict):
        if any(type(key) is not str for key in value):
            raise ValueError("object keys in data must be strings")
        items: Any = value.values()
    elif kind is list and isinstance(value, list):
        items = value
    else:
        raise ValueError(f"data must be JSON (dict, list, str, int, float, bool, None), not {kind}")
    if depth >= MAX_DATA_DEPTH:
        raise ValueError(f"data nests deeper than {MAX_DATA_DEPTH} levels")
    for item in items:
        _check_data(item, depth + 1)


def _too_deep(text: str) -> bool:
    """Whether canonical JSON text nests deeper than the data limit allows (payload + 1)."""
    limit = MAX_DATA_DEPTH + 1
    if text.count("[") + text.count("{") <= limit:  # the usual case: no scan needed
        return False
    depth = 0
    for char in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _binding(ctx: StateContext, principal: str | None) -> str:
    """base64url SHA-256 of canonical ``[method, principal, salient params]``.

    Lone surrogates (which a JSON parser lets through from the peer) are hashed in their
    surrogatepass form so binding never fails on odd but well-formed input. An empty
    ``arguments`` object means what no ``arguments`` means, so it is bound the same: a
    client may send either on a retry.
    """
    params = ctx.request_params
    salient = {
        key: value
        for key, value in params.items()
        if key not in _UNBOUND and not (key == "arguments" and value == {})
    }
    text = _encode([ctx.request_method, principal, salient])
    return _b64(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())


def _mac(key: hmac.HMAC, signed: str, binding: str) -> str:
    mac = key.copy()
    mac.update(f"{signed}.{binding}".encode("ascii"))
    return _b64(mac.digest())


def _aad(kid: str, binding: str) -> bytes:
    """What an ``e1`` box authenticates besides its payload, as ``v1`` MACs it."""
    return f"{ENCRYPTED_VERSION}.{kid}.{binding}".encode("ascii")


def _random(randbytes: Callable[[int], bytes], size: int) -> bytes:
    raw = randbytes(size)
    if type(raw) is not bytes or len(raw) != size:
        raise ValueError(f"randbytes({size}) must return {size} bytes")
    return raw


def seal(
    data: Any,
    ctx: StateContext,
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
    once: bool = False,
    encrypted: bool = False,
    randbytes: Callable[[int], bytes] = os.urandom,
) -> str:
    """A token carrying ``data`` and bound to this request: signed, or with ``encrypted``
    also unreadable; with ``once`` it opens only through ``open_once``, one time.

    ``principal`` must come from trusted authentication (None is anonymous).
    ``randbytes`` supplies the one-time id, then the nonce; replace it only to reproduce
    test vectors. Raises TypeError/ValueError for bad options, data that is not JSON, or
    a token that would exceed MAX_TOKEN_LENGTH; ImportError for ``encrypted`` without
    the cryptography package.
    """
    key_set = _keys(secret, keys)
    lifetime = _lifetime(ttl)
    _check_principal(principal)
    if not isinstance(once, bool):
        raise TypeError("once must be True or False")
    _check_encrypted(encrypted)
    _check_data(data, 0)
    issued = math.floor(ctx.clock())
    payload = f'{{"data":{_encode(data)},"exp":{issued + lifetime},"iat":{issued}'
    if once:
        payload += f',"jti":"{_b64(_random(randbytes, ONCE_ID_BYTES))}"'
    plain = f"{payload}}}".encode()
    try:
        binding = _binding(ctx, principal)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError("request params are not JSON and cannot be bound") from exc
    kid = key_set.seal_kid
    if encrypted:
        nonce = _random(randbytes, NONCE_BYTES)
        box = key_set.seal_key.cipher().encrypt(nonce, plain, _aad(kid, binding))
        token = f"{ENCRYPTED_VERSION}.{kid}.{_b64(nonce + box)}"
    else:
        signed = f"{VERSION}.{kid}.{_b64(plain)}"
        token = f"{signed}.{_mac(key_set.seal_key.mac, signed, binding)}"
    if len(token) > MAX_TOKEN_LENGTH:
        raise ValueError(f"sealed state exceeds {MAX_TOKEN_LENGTH} characters; keep less in it")
    return token


def _split(token: object) -> list[str] | None:
    """The parts of a token that passes the pre-crypto checks: size, ASCII, shape."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        return None
    parts = token.split(".")
    return parts if (parts[0], len(parts)) in _SHAPES else None


def _payload(raw: bytes) -> Any:
    text = raw.decode("utf-8")
    if _too_deep(text):
        raise ValueError("too deep")
    return _decode(text)


def inspect(token: str) -> dict[str, Any]:
    """The readable fields of a token, UNVERIFIED: for operators and logs, never for trust.

    An encrypted token shows only its version and key id. Raises ValueError when the
    token is not shaped like one.
    """
    parts = _split(token)
    if parts is None:
        raise ValueError("not a state token")
    version, kid, encoded = parts[:3]
    if version == ENCRYPTED_VERSION:
        return {"version": version, "kid": kid}
    try:
        payload = _payload(_unb64(encoded))
    except (ValueError, RecursionError) as exc:
        raise ValueError("not a state token") from exc
    if not isinstance(payload, dict):
        raise ValueError("not a state token")
    return {"version": VERSION, "kid": kid, **payload}


def _decrypt(key: _Key, kid: str, box: str, binding: str) -> bytes:
    """The payload of an ``e1`` box, or InvalidState."""
    # Only the exact encoding the sealer wrote: the alphabet (urlsafe_b64decode would skip
    # other characters) and the spare bits of the last character (re-encoding must match).
    if box.strip(_KID_CHARS):
        raise InvalidState()
    try:
        raw = _unb64(box)
        cipher = key.cipher()
    except (ValueError, ImportError):  # a node without cryptography cannot open e1
        raise InvalidState() from None
    if len(raw) < NONCE_BYTES + TAG_BYTES or _b64(raw) != box:
        raise InvalidState()
    try:
        return cipher.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], _aad(kid, binding))
    except _aead()[1]:
        raise InvalidState() from None


def _verified(
    token: object,
    ctx: StateContext,
    secret: bytes | None,
    keys: Sequence[tuple[str, bytes]] | None,
    principal: str | None,
    ttl: float,
) -> tuple[Any, str | None, int]:
    """Data, one-time id (None for a reusable token) and expiry of an authentic live token."""
    key_set = _keys(secret, keys)
    lifetime = _lifetime(ttl)
    _check_principal(principal)
    parts = _split(token)
    if parts is None:
        raise InvalidState()
    version, kid = parts[0], parts[1]
    key = key_set.for_kid(kid)
    if key is None:
        raise InvalidState()
    try:
        binding = _binding(ctx, principal)
    except (TypeError, ValueError, RecursionError):
        raise InvalidState() from None
    if version == ENCRYPTED_VERSION:
        raw = _decrypt(key, kid, parts[2], binding)
    else:
        signed = f"{version}.{kid}.{parts[2]}"
        if not hmac.compare_digest(_mac(key.mac, signed, binding), parts[3]):
            raise InvalidState()
        try:
            raw = _unb64(parts[2])
        except ValueError:
            raise InvalidState() from None
    # Authentic from here on: a key holder made it. Still parse defensively.
    try:
        payload = _payload(raw)
    except (ValueError, RecursionError):
        raise InvalidState() from None
    if type(payload) is not dict:
        raise InvalidState()
    fields = payload.keys()
    jti = payload.get("jti")
    if fields != _PAYLOAD_KEYS and not (fields == _ONCE_PAYLOAD_KEYS and _valid_jti(jti)):
        raise InvalidState()
    issued, expires = payload["iat"], payload["exp"]
    if type(issued) is not int or type(expires) is not int:
        raise InvalidState()
    now = ctx.clock()
    # Stated as what must hold, so a NaN clock rejects rather than accepts.
    if not (0 < expires - issued <= lifetime and issued - CLOCK_SKEW <= now < expires):
        raise InvalidState()
    return payload["data"], jti, expires


def _valid_jti(jti: object) -> bool:
    return isinstance(jti, str) and len(jti) == _JTI_LENGTH and not jti.strip(_KID_CHARS)


# Shadows builtins.open inside this module on purpose: the module does no I/O.
def open(
    token: str,
    ctx: StateContext,
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
) -> Any:
    """The data sealed into ``token``, if it was sealed for this request; else InvalidState.

    Pass the options ``seal`` got (``encrypted`` is not needed: both formats open). ``ttl``
    here caps the lifetime a token may claim, so tokens sealed with a longer ttl are
    refused. One-time tokens are refused too: they open only through ``open_once``.
    Option errors raise TypeError/ValueError; everything about the token itself raises
    the one InvalidState.
    """
    data, jti, _ = _verified(token, ctx, secret, keys, principal, ttl)
    if jti is not None:
        raise InvalidState()
    return data


async def open_once(
    token: str,
    ctx: StateContext,
    *,
    guard: ReplayGuard,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
) -> Any:
    """Like ``open`` for a token sealed with ``once=True``, and only the first time.

    The token is verified completely before ``guard`` is asked to consume its id, so
    forgeries never reach the store. The guard holds the id until ``exp + CLOCK_SKEW``:
    a node whose clock lags by up to the tolerated skew still accepts the token until
    then. A replayed or reusable (no id) token raises the one InvalidState; a failing
    store raises its own error, so the request fails rather than skipping the check.
    """
    data, jti, expires = _verified(token, ctx, secret, keys, principal, ttl)
    if jti is None or not await guard.consume(jti, expires + CLOCK_SKEW):
        raise InvalidState()
    return data
