"""The state token format: ``v1`` (signed) and ``e1`` (encrypted) tokens, sealed and verified.

The functions here take options already checked (a ``KeySet``, a lifetime in whole
seconds); ``snodo.core.state.keyring.Keyring`` checks them once and ``snodo.core.state``
describes the format as a whole. docs/state-token.md is the byte-level reference, with test vectors.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple, Protocol

from snodo.core.errors import InvalidState
from snodo.core.state.canonical import (
    B64_ALPHABET,
    b64,
    check_data,
    encode_utf8,
    read_payload,
    unb64,
)
from snodo.core.state.keys import Key, KeySet, aead

__all__ = [
    "CLOCK_SKEW",
    "DEFAULT_TTL",
    "ENCRYPTED_VERSION",
    "MAX_FLOW_LENGTH",
    "MAX_TOKEN_LENGTH",
    "MAX_TTL",
    "VERSION",
    "StateContext",
    "Verified",
    "binding_of",
    "check_asked",
    "check_flow",
    "inspect",
    "lifetime",
    "seal_token",
    "verify_token",
]

VERSION: Final = "v1"
"""The first field of a signed, readable token (docs/state-token.md)."""
ENCRYPTED_VERSION: Final = "e1"
"""The first field of an encrypted token."""
DEFAULT_TTL: Final = 300
"""Seconds; the Elixir Snodo default (seeds, "State and effects")."""
MAX_TTL: Final = 900
"""Seconds; long enough for a person to answer a form, short enough to bound replay."""
CLOCK_SKEW: Final = 60
"""Seconds an issued-at may lie ahead of the opener's clock (nodes' clocks differ)."""
MAX_TOKEN_LENGTH: Final = 8192
"""Characters (= bytes: tokens are ASCII). Within common 8 KiB header-line limits too."""
ONCE_ID_BYTES: Final = 16
"""128 bits: random ids that never collide in practice, however many tokens are sealed."""
NONCE_BYTES: Final = 12
"""96 bits: the GCM nonce length NIST SP 800-38D section 8.2 recommends."""
TAG_BYTES: Final = 16
"""The full 128-bit GCM tag (cryptography's AESGCM default and only choice)."""

_UNBOUND: Final = frozenset(("_meta", "inputResponses", "requestState"))
_PAYLOAD_KEYS: Final = frozenset(("data", "exp", "iat"))
_OPTIONAL_KEYS: Final = frozenset(("asked", "flow", "jti"))
DIGEST_LENGTH: Final = 22
"""Characters of a question digest in ``asked``: base64url of 128 bits, unpadded."""
MAX_ASKED: Final = 256
"""Questions one flow may have pinned in its state."""
MAX_FLOW_LENGTH: Final = 128
"""Characters of the optional ``flow`` mark: an observer's link between rounds, not data."""
_FLOW_ALPHABET: Final = B64_ALPHABET + "."
_JTI_LENGTH: Final = 22
"""base64url of the 16-byte id, unpadded."""
_ENCRYPTED_PREFIX: Final = ENCRYPTED_VERSION.encode("ascii")


class StateContext(Protocol):
    """What sealing needs from a request; ``snodo.core.context.Context`` satisfies it."""

    @property
    def request_method(self) -> str: ...

    @property
    def request_params(self) -> Mapping[str, Any]:
        """The request's params. A ``MappingProxyType`` is read through its ``copy()``,
        which must give a new dict of the same items, as a proxy over a dict does."""
        ...

    @property
    def clock(self) -> Callable[[], float]: ...


def lifetime(ttl: object) -> int:
    """ttl rounded up to whole seconds, the lifetime written into (and accepted from) tokens."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        raise TypeError("ttl must be a number of seconds")
    if not 0 < ttl <= MAX_TTL:  # NaN fails this too
        raise ValueError(f"ttl must be more than 0 and at most {MAX_TTL} seconds")
    return math.ceil(ttl)


def check_principal(principal: object) -> None:
    if principal is not None and not isinstance(principal, str):
        raise TypeError("principal must be a string, or None for anonymous")


def check_flow(flow: object) -> str | None:
    """A flow mark is short and plain (base64url characters and dots), or None."""
    if flow is None:
        return None
    if not isinstance(flow, str) or not 0 < len(flow) <= MAX_FLOW_LENGTH:
        raise ValueError(f"flow must be 1 to {MAX_FLOW_LENGTH} characters")
    if flow.strip(_FLOW_ALPHABET):
        raise ValueError("flow must be base64url characters and dots")
    return flow


def check_asked(asked: object) -> Mapping[str, str] | None:
    """The questions a flow asked, by key (``snodo.core.input_responses.pin``): at most
    ``MAX_ASKED`` non-empty keys, each with a digest of ``DIGEST_LENGTH`` base64url characters."""
    if asked is None:
        return None
    # A dict, as the server's own always is, skips the slower check against the ABC.
    if not (type(asked) is dict or isinstance(asked, Mapping)) or len(asked) > MAX_ASKED:
        raise ValueError(f"asked must map at most {MAX_ASKED} keys to question digests")
    for key, digest in asked.items():
        if not isinstance(key, str) or not key or not _is_digest(digest):
            raise ValueError("asked must map non-empty keys to question digests")
    return asked


def _is_digest(digest: object) -> bool:
    return (
        isinstance(digest, str) and len(digest) == DIGEST_LENGTH and not digest.strip(B64_ALPHABET)
    )


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False")
    return value


def _binding(ctx: StateContext, principal: str | None) -> bytes:
    """base64url (ASCII bytes) of SHA-256 of canonical ``[method, principal, salient params]``.

    Lone surrogates (which a JSON parser lets through from the peer) are hashed in their
    surrogatepass form so binding never fails on odd but well-formed input. An empty
    ``arguments`` object means what no ``arguments`` means, so it is bound the same: a
    client may send either on a retry.
    """
    params = ctx.request_params
    # A Context's params are a proxy over a dict: dict() of a proxy goes key by key,
    # its copy() is the dict's own copy, in C (StateContext says what it relies on).
    copied: object = None
    try:
        if type(params) is MappingProxyType:
            proxy: Any = params  # its copy() is what the mapping under it gives: any type
            copied = proxy.copy()
    except AttributeError:  # a proxy over a mapping without copy()
        pass
    # Any other mapping, or a proxy over one, is copied key by key.
    salient = copied if type(copied) is dict else dict(params)
    for key in _UNBOUND:
        salient.pop(key, None)
    if salient.get("arguments") == {}:
        del salient["arguments"]
    # The canonical text of the array, item by item: an anonymous principal's null
    # would otherwise send the whole array to the slower encoder.
    method = ctx.request_method
    named = _METHOD_TEXTS.get(method)
    if named is None:
        named = encode_utf8(method, errors="surrogatepass")
        if len(_METHOD_TEXTS) < MAX_KNOWN_METHODS:
            _METHOD_TEXTS[method] = named
    who = b"null" if principal is None else encode_utf8(principal, errors="surrogatepass")
    text = b"[%b,%b,%b]" % (named, who, encode_utf8(salient, errors="surrogatepass"))
    return b64(hashlib.sha256(text).digest()).encode("ascii")


def binding_of(ctx: StateContext, principal: str | None) -> bytes:
    """What a token sealed in this request for ``principal`` is bound to (``_binding``),
    for a caller that seals more than once in one request (the server's sealer) and
    passes it to ``seal_token``. ValueError for params that are not JSON."""
    try:
        return _binding(ctx, principal)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError("request params are not JSON and cannot be bound") from exc


MAX_KNOWN_METHODS: Final = 64
"""Method names whose canonical text ``_binding`` keeps: the few that seal state are
written once per process, and made-up names cannot grow the table past this."""
_METHOD_TEXTS: dict[str, bytes] = {}


def _mac(key: Key, signed: str, binding: bytes) -> str:
    return b64(key.mac(b"%b.%b" % (signed.encode("ascii"), binding)))


def _aad(kid: str, binding: bytes) -> bytes:
    """What an ``e1`` box authenticates besides its payload, as ``v1`` MACs it."""
    return b"%b.%b.%b" % (_ENCRYPTED_PREFIX, kid.encode("ascii"), binding)


def _random(randbytes: Callable[[int], object], size: int) -> bytes:
    raw = randbytes(size)  # the caller's function: anything, until checked
    if type(raw) is not bytes or len(raw) != size:
        raise ValueError(f"randbytes({size}) must return {size} bytes")
    return raw


def seal_token(
    keys: KeySet,
    data: Any,
    ctx: StateContext,
    principal: str | None,
    lifetime: int,
    once: bool,
    encrypted: bool,
    randbytes: Callable[[int], bytes],
    flow: str | None = None,
    asked: Mapping[str, str] | None = None,
    binding: bytes | None = None,
) -> str:
    """A token carrying ``data``, bound to this request and principal (options checked).

    ``flow`` (checked by ``check_flow``) and ``asked`` (by ``check_asked``) ride in the
    payload beside the data: as readable as the data is, and as authentic. ``binding``
    is ``binding_of(ctx, principal)`` where the caller has it already.
    """
    text = encode_utf8(data, check_data(data))
    issued = math.floor(ctx.clock())
    plain = b"{"
    if asked:
        plain += b'"asked":%b,' % encode_utf8(dict(asked))
    plain += b'"data":%b,"exp":%d' % (text, issued + lifetime)
    if flow is not None:
        plain += b',"flow":"%b"' % flow.encode("ascii")
    plain += b',"iat":%d' % issued
    if once:
        plain += b',"jti":"%b"' % b64(_random(randbytes, ONCE_ID_BYTES)).encode("ascii")
    plain += b"}"
    if binding is None:
        binding = binding_of(ctx, principal)
    kid = keys.seal_kid
    if encrypted:
        nonce = _random(randbytes, NONCE_BYTES)
        box = keys.seal_key.cipher().encrypt(nonce, plain, _aad(kid, binding))
        token = f"{ENCRYPTED_VERSION}.{kid}.{b64(nonce + box)}"
    else:
        signed = f"{VERSION}.{kid}.{b64(plain)}"
        token = f"{signed}.{_mac(keys.seal_key, signed, binding)}"
    if len(token) > MAX_TOKEN_LENGTH:
        raise ValueError(f"sealed state exceeds {MAX_TOKEN_LENGTH} characters; keep less in it")
    return token


def _split(token: object) -> list[str] | None:
    """The parts of a token that passes the pre-crypto checks: size, ASCII, shape."""
    if not isinstance(token, str) or len(token) > MAX_TOKEN_LENGTH or not token.isascii():
        return None
    parts = token.split(".")
    version, count = parts[0], len(parts)
    if (version == VERSION and count == 4) or (version == ENCRYPTED_VERSION and count == 3):
        return parts
    return None


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
        payload = read_payload(unb64(encoded))
    except (ValueError, RecursionError) as exc:
        raise ValueError("not a state token") from exc
    if not isinstance(payload, dict):
        raise ValueError("not a state token")
    return {"version": VERSION, "kid": kid, **payload}


def _decrypt(key: Key, kid: str, box: str, binding: bytes) -> bytes:
    """The payload of an ``e1`` box, or InvalidState."""
    # Only the exact encoding the sealer wrote: the alphabet (urlsafe_b64decode would skip
    # other characters) and the spare bits of the last character (re-encoding must match).
    if box.strip(B64_ALPHABET):
        raise InvalidState("malformed")
    try:
        raw = unb64(box)
        cipher = key.cipher()
    except (ValueError, ImportError):  # a node without cryptography cannot open e1
        raise InvalidState("malformed") from None
    if len(raw) < NONCE_BYTES + TAG_BYTES or b64(raw) != box:
        raise InvalidState("malformed")
    try:
        return cipher.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], _aad(kid, binding))
    except aead()[1]:
        raise InvalidState("forged") from None


def _valid_jti(jti: object) -> bool:
    return isinstance(jti, str) and len(jti) == _JTI_LENGTH and not jti.strip(B64_ALPHABET)


def _valid_payload(payload: dict[str, Any]) -> bool:
    """Exactly data, exp and iat, with a well-formed jti and flow when they are there."""
    if len(payload) == 3 and "data" in payload and "exp" in payload and "iat" in payload:
        return True  # the usual payload: a reusable token with no flow mark
    fields = payload.keys()
    if not fields >= _PAYLOAD_KEYS or not fields - _PAYLOAD_KEYS <= _OPTIONAL_KEYS:
        return False
    if "jti" in payload and not _valid_jti(payload["jti"]):
        return False
    if "flow" in payload:
        try:
            check_flow(payload["flow"])
        except ValueError:
            return False
    if "asked" in payload:
        asked = payload["asked"]
        if type(asked) is not dict or not asked:
            return False
        try:
            check_asked(asked)
        except ValueError:
            return False
    return True


class Verified(NamedTuple):
    """What an authentic live token holds."""

    data: Any
    jti: str | None
    """The one-time id; None for a reusable token."""
    expires: int
    flow: str | None
    """The flow mark sealed with the data, if any."""
    asked: Mapping[str, str] | None = None
    """The questions the flow had asked when this was sealed, by key (their digests)."""


def verify_token(
    keys: KeySet, token: object, ctx: StateContext, principal: str | None, lifetime: int
) -> Verified:
    """Data, one-time id, expiry, flow mark and asked questions of an authentic live token.

    The cheap checks come first (size, shape, key id), then the MAC in constant time (or
    the AEAD tag), and only then JSON and times. Every failure is the same InvalidState;
    its ``reason`` says which check failed, for the server's eyes only. A token bound to
    another request fails its MAC exactly as a forgery does, so both are "forged".
    """
    parts = _split(token)
    if parts is None:
        raise InvalidState("malformed")
    version, kid = parts[0], parts[1]
    key = keys.for_kid(kid)
    if key is None:
        raise InvalidState("unknown_key")
    try:
        binding = _binding(ctx, principal)
    except (TypeError, ValueError, RecursionError):
        raise InvalidState("malformed") from None
    if version == ENCRYPTED_VERSION:
        raw = _decrypt(key, kid, parts[2], binding)
    else:
        signed = f"{version}.{kid}.{parts[2]}"
        if not hmac.compare_digest(_mac(key, signed, binding), parts[3]):
            raise InvalidState("forged")
        try:
            raw = unb64(parts[2])
        except ValueError:
            raise InvalidState("malformed") from None
    # Authentic from here on: a key holder made it. Still parse defensively.
    try:
        payload = read_payload(raw)
    except (ValueError, RecursionError):
        raise InvalidState("malformed") from None
    if type(payload) is not dict or not _valid_payload(payload):
        raise InvalidState("malformed")
    issued, expires = payload["iat"], payload["exp"]
    if type(issued) is not int or type(expires) is not int:
        raise InvalidState("malformed")
    now = ctx.clock()
    # Stated as what must hold, so a NaN clock rejects rather than accepts.
    if not 0 < expires - issued <= lifetime:
        raise InvalidState("malformed")
    if not issued - CLOCK_SKEW <= now < expires:
        raise InvalidState("expired")
    return Verified(
        payload["data"], payload.get("jti"), expires, payload.get("flow"), payload.get("asked")
    )
