"""Sealed request state for multi round-trip requests (MRTR).

Theory of operation
-------------------
A server that answers ``input_required`` may hand the client a ``requestState`` string,
and the client echoes it on the retry. basic/patterns/mrtr.mdx says that string is
attacker-controlled: if it steers anything, the server MUST protect its integrity and
SHOULD bind it to the principal, a short expiry and the originating request. ``seal``
and ``open`` do exactly that, and nothing else:

* The token is signed, not encrypted: ``v1.<kid>.<payload>.<mac>``, where ``payload`` is
  base64url of canonical JSON ``{"data": ..., "exp": ..., "iat": ...}``. Never put
  secrets in it.
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

Tokens can be replayed until they expire; one-time effects need server-side tracking.
This module does no I/O; the time comes from ``ctx.clock()``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Final, Protocol

from snodo.errors import InvalidState

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
    "seal",
]

VERSION: Final = "v1"
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

_KID_CHARS: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_KID_MAX: Final = 32
_FINGERPRINT_LABEL: Final = b"snodo/state/kid"
_UNBOUND: Final = frozenset(("_meta", "inputResponses", "requestState"))
_PAYLOAD_KEYS: Final = frozenset(("data", "exp", "iat"))
_MAC_LENGTH: Final = 43
"""base64url of the 32-byte HMAC-SHA256, unpadded."""

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


class _Keys:
    """A validated secret or keyring, with pre-keyed HMAC states (copying one is cheap)."""

    __slots__ = ("any_kid", "by_kid", "seal_kid", "seal_mac")

    def __init__(
        self,
        seal_kid: str,
        seal_mac: hmac.HMAC,
        by_kid: dict[str, hmac.HMAC],
        any_kid: hmac.HMAC | None,
    ) -> None:
        self.seal_kid = seal_kid
        self.seal_mac = seal_mac
        self.by_kid = by_kid
        self.any_kid = any_kid
        """Set in ``secret=`` mode: the one key, tried whatever key id the token names."""

    def for_kid(self, kid: str) -> hmac.HMAC | None:
        if self.any_kid is not None:
            return self.any_kid if _valid_kid(kid) else None
        return self.by_kid.get(kid)


_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")


def _b64(raw: bytes) -> str:
    """base64url without padding (RFC 4648 section 5), one C call per step."""
    return binascii.b2a_base64(raw, newline=False).rstrip(b"=").translate(_URLSAFE).decode()


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
    mac = _hmac(secret)
    return _Keys(fingerprint(secret), mac, {}, mac)


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
    by_kid = {kid: _hmac(secret) for kid, secret in secrets.items()}
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


def check_options(
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
) -> None:
    """Raise the TypeError/ValueError ``seal``/``open`` would, so servers fail at start-up."""
    _keys(secret, keys)
    _lifetime(ttl)
    _check_principal(principal)


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
    surrogatepass form so binding never fails on odd but well-formed input.
    """
    params = ctx.request_params
    salient = {key: value for key, value in params.items() if key not in _UNBOUND}
    text = _encode([ctx.request_method, principal, salient])
    return _b64(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())


def _mac(key: hmac.HMAC, signed: str, binding: str) -> str:
    mac = key.copy()
    mac.update(f"{signed}.{binding}".encode("ascii"))
    return _b64(mac.digest())


def seal(
    data: Any,
    ctx: StateContext,
    *,
    secret: bytes | None = None,
    keys: Sequence[tuple[str, bytes]] | None = None,
    principal: str | None = None,
    ttl: float = DEFAULT_TTL,
) -> str:
    """A signed, readable token carrying ``data`` and bound to this request.

    ``principal`` must come from trusted authentication (None is anonymous). Raises
    TypeError/ValueError for bad options, data that is not JSON, or a token that would
    exceed MAX_TOKEN_LENGTH.
    """
    key_set = _keys(secret, keys)
    lifetime = _lifetime(ttl)
    _check_principal(principal)
    _check_data(data, 0)
    issued = math.floor(ctx.clock())
    payload = f'{{"data":{_encode(data)},"exp":{issued + lifetime},"iat":{issued}}}'
    try:
        binding = _binding(ctx, principal)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError("request params are not JSON and cannot be bound") from exc
    signed = f"{VERSION}.{key_set.seal_kid}.{_b64(payload.encode('utf-8'))}"
    if len(signed) + 1 + _MAC_LENGTH > MAX_TOKEN_LENGTH:
        raise ValueError(f"sealed state exceeds {MAX_TOKEN_LENGTH} characters; keep less in it")
    return f"{signed}.{_mac(key_set.seal_mac, signed, binding)}"


def _parse(token: object) -> tuple[str, str, str, str] | None:
    """Split a token that passes the pre-crypto checks into signed text, kid, payload, mac."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        return None
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != VERSION:
        return None
    version, kid, payload, mac = parts
    return f"{version}.{kid}.{payload}", kid, payload, mac


def _payload(encoded: str) -> Any:
    text = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8")
    if _too_deep(text):
        raise ValueError("too deep")
    return _decode(text)


def inspect(token: str) -> dict[str, Any]:
    """The readable fields of a token, UNVERIFIED: for operators and logs, never for trust.

    Raises ValueError when the token is not shaped like one.
    """
    parts = _parse(token)
    if parts is None:
        raise ValueError("not a v1 state token")
    _, kid, encoded, _ = parts
    try:
        payload = _payload(encoded)
    except (ValueError, RecursionError) as exc:
        raise ValueError("not a v1 state token") from exc
    if not isinstance(payload, dict):
        raise ValueError("not a v1 state token")
    return {"version": VERSION, "kid": kid, **payload}


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

    Pass the options ``seal`` got. ``ttl`` here caps the lifetime a token may claim, so
    tokens sealed with a longer ttl are refused. Option errors raise TypeError/ValueError;
    everything about the token itself raises the one InvalidState.
    """
    key_set = _keys(secret, keys)
    lifetime = _lifetime(ttl)
    _check_principal(principal)
    parts = _parse(token)
    if parts is None:
        raise InvalidState()
    signed, kid, encoded, mac = parts
    key = key_set.for_kid(kid)
    if key is None:
        raise InvalidState()
    try:
        binding = _binding(ctx, principal)
    except (TypeError, ValueError, RecursionError):
        raise InvalidState() from None
    if not hmac.compare_digest(_mac(key, signed, binding), mac):
        raise InvalidState()
    # Authentic from here on: a key holder made it. Still parse defensively.
    try:
        payload = _payload(encoded)
    except (ValueError, RecursionError):
        raise InvalidState() from None
    if type(payload) is not dict or payload.keys() != _PAYLOAD_KEYS:
        raise InvalidState()
    issued, expires = payload["iat"], payload["exp"]
    if type(issued) is not int or type(expires) is not int:
        raise InvalidState()
    now = ctx.clock()
    # Stated as what must hold, so a NaN clock rejects rather than accepts.
    if not (0 < expires - issued <= lifetime and issued - CLOCK_SKEW <= now < expires):
        raise InvalidState()
    return payload["data"]
