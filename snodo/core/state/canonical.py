"""Canonical JSON and base64url: the byte-exact encodings sealed state is built from.

Canonical JSON (docs/state-token.md has the exact rules): keys sorted by code point, no
whitespace, raw UTF-8, ``1``, ``1.0`` and ``true`` kept distinct, NaN and infinities
refused. base64url is RFC 4648 section 5 without padding. What a token carries must be
exactly JSON, so what is opened equals what was sealed.
"""

from __future__ import annotations

import binascii
import json
import math
import re
from typing import Any, Final

from snodo.core.jsonrpc import UNREAD, as_json, finite_float, read_utf8, write_fast

__all__ = [
    "B64_ALPHABET",
    "MAX_DATA_DEPTH",
    "b64",
    "check_data",
    "decode",
    "encode",
    "encode_utf8",
    "read_payload",
    "too_deep",
    "unb64",
]

MAX_DATA_DEPTH: Final = 32
"""Nesting levels of arrays/objects in ``data``; a scalar is depth 0."""
B64_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
"""The base64url alphabet (RFC 4648 section 5); key ids use exactly these characters too."""

# The standard encoder, whose text is canonical JSON by definition: sorted keys, no
# whitespace, raw UTF-8, no NaN. check_circular is off because cycles are caught
# elsewhere (depth walk, RecursionError). A UUID or Enum member is written as its
# value, as orjson writes it and as snodo writes it on the wire.
_standard = json.JSONEncoder(
    ensure_ascii=False,
    allow_nan=False,
    sort_keys=True,
    separators=(",", ":"),
    check_circular=False,
    default=as_json,
).encode
_DIGITS_AS_ZERO: Final = bytes.maketrans(b"123456789E", b"000000000e")


def may_differ(text: bytes) -> bool:
    """Whether orjson's ``text`` may differ from the standard encoder's: where it holds a
    ``null`` (orjson writes NaN and the infinities so) or a float (it writes ``0.00001``
    for ``1e-05``), found as a digit followed by ``.``, ``e`` or ``E``. A string that
    merely looks like one costs the slower path, never a different text. Bytes methods,
    not a regular expression: the request path then never enters the regex engine."""
    if text.find(b"null") >= 0:
        return True
    marked = text.translate(_DIGITS_AS_ZERO)  # every digit a 0, every E an e
    return marked.find(b"0.") >= 0 or marked.find(b"0e") >= 0


def encode_utf8(value: Any, floats: bool = True, errors: str = "strict") -> bytes:
    """Canonical JSON of ``value`` as UTF-8 bytes: the standard encoder's text, always.
    What is hashed and MACed is bytes, so it never goes through ``str``.

    orjson writes it when installed and its text holds no float and no ``null``; what
    it refuses (subclasses, lone surrogates, integers beyond 64 bits, keys that are not
    strings) goes to the standard encoder, whose verdict stands. Keys sort the same
    either way: UTF-8 byte order is code point order. A lone surrogate raises
    (UnicodeEncodeError, a ValueError) unless ``errors`` is ``"surrogatepass"``.
    ``floats=False`` says the caller has walked ``value`` (``check_data``) and found no
    float, so orjson's text is the standard encoder's with no search of it.
    """
    fast = write_fast(value, sort_keys=True)
    if fast is not None and not (floats and may_differ(fast)):
        return fast
    return _standard(value).encode("utf-8", errors)


def encode(value: Any) -> str:
    """Canonical JSON text of ``value`` (``encode_utf8``'s, as ``str``)."""
    return encode_utf8(value, errors="surrogatepass").decode("utf-8", "surrogatepass")


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


decode = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=finite_float).decode
"""JSON text to a value; ValueError for NaN and infinities, which canonical JSON refuses."""


def read_payload(raw: bytes) -> Any:
    """``decode`` of UTF-8 text, refusing it (ValueError) when it nests deeper than a
    payload may; orjson reads it where ``snodo.core.jsonrpc.read_utf8`` says it may."""
    value = read_utf8(raw, MAX_DATA_DEPTH + 1)  # too_deep's own first test
    if value is not UNREAD:
        return value
    text = raw.decode("utf-8")
    if too_deep(text):
        raise ValueError("too deep")
    return decode(text)


# A JSON string literal, to blank out before counting brackets.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")


def b64(raw: bytes) -> str:
    """base64url without padding (RFC 4648 section 5), one C call per step."""
    return binascii.b2a_base64(raw, newline=False).rstrip(b"=").translate(_URLSAFE).decode()


_FROM_URLSAFE: Final = bytes.maketrans(b"-_", b"+/")
_PADDING: Final = ("", "=", "==", "===")


def unb64(text: str) -> bytes:
    """Inverse of ``b64``; ValueError (binascii.Error) on a length no encoding has, and
    on text that is not ASCII. As ``base64.urlsafe_b64decode`` reads it (characters
    outside the alphabet skipped), in one C call per step."""
    raw = (text + _PADDING[-len(text) % 4]).encode("ascii").translate(_FROM_URLSAFE)
    return binascii.a2b_base64(raw)


def check_data(value: object, depth: int = 0) -> bool:
    """Refuse anything that is not exactly JSON, so what ``open`` returns equals ``data``;
    whether it holds a float (the one type orjson may write otherwise: ``encode_utf8``).

    json.dumps would quietly turn tuples into arrays and int keys into strings, and
    subclasses (bool is an int) would blur the numeric types the encoding keeps apart.
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return False
    if kind is float and isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("data must not contain NaN or infinities")
        return True
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
    floats = False
    for item in items:
        if check_data(item, depth + 1):
            floats = True
    return floats


def too_deep(text: str) -> bool:
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
