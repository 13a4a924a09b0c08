"""A response whose result keeps its large members as their bytes, for a proxy to pass on.

A proxy that decodes a backend's result only to encode it again spends most of its
time on a large answer on ``snodo.core.jsonrpc.decode``'s checks and on encoding: a result
of 20,000 text blocks (about 1 MB) costs 9.6 ms to decode (3.4 of them orjson's) and
0.4 ms to encode. ``decode`` reads the envelope and the result's members; a member
larger than ``SMALL_MEMBER`` bytes is checked (well-formed JSON, valid UTF-8, no NaN,
no line end, no key given twice) and kept as an ``orjson.Fragment`` of its bytes,
which ``snodo.core.jsonrpc.encode`` writes out as they are
(``snodo.core.jsonrpc.decode_passthrough`` decodes them for a reader that needs the
values). Everything the proxy reads stays decoded: ``_meta``, the small members
(``isError``, ``resultType``, a cursor), and the whole of a result that is not complete
(its questions and state).

A key given twice in one object means what the decoded path makes of it, the last
value: a member holding one is decoded (``_collapses``), so a front never gets bytes
that another parser would read otherwise (the first value, or a refusal). Refusing such
keys on both paths instead would cost every decoded message a check, some 8 to 12 % of
a whole ``tools/call`` in process; here the check costs a member holding objects what
orjson takes to read and write it (about 3.6 ms for 20,000 text blocks, little for a
few large strings), and nothing is decoded twice (bench/README.md). A member
with too many values for ``snodo.core.jsonrpc.MAX_VALUES`` is decoded too, so its verdict is
the decoded path's. msgspec's own bound on nesting (the recursion limit, about a
thousand levels) holds; a front that allows less refuses the answer. Numbers pass as
written: one beyond the largest float (``1e400``), which ``snodo.core.jsonrpc.decode``
refuses, reaches the front as the backend wrote it.
A body smaller than ``SMALL_BODY``, an error, a request or notification, or anything
msgspec does not read as a response is decoded whole by ``snodo.core.jsonrpc.decode``, whose
verdict stands; so is every body when msgspec or orjson is not installed.
"""

from __future__ import annotations

import json
from typing import Any, Final

from snodo.core import jsonrpc

try:
    import msgspec
    import orjson
except ImportError:  # pragma: no cover - the http extra brings both
    msgspec = None  # type: ignore[assignment]
    orjson = None  # type: ignore[assignment]

__all__ = ["SMALL_BODY", "SMALL_MEMBER", "decode", "kept"]

SMALL_BODY: Final = 4096
"""Bodies below this are decoded whole: orjson builds them as fast as they are read here."""
SMALL_MEMBER: Final = 256
"""Members up to this many bytes are decoded, so that what is small stays readable."""

if msgspec is not None and orjson is not None:

    class _Response(msgspec.Struct, forbid_unknown_fields=True):
        """A JSON-RPC response as read here: the result's members left as bytes. Any
        other key, or an error or method beside the result, is not one."""

        jsonrpc: Any = msgspec.UNSET
        id: Any = msgspec.UNSET
        result: dict[str, msgspec.Raw] | msgspec.UnsetType = msgspec.UNSET
        error: Any = msgspec.UNSET
        method: Any = msgspec.UNSET

    _READ: Any = msgspec.json.Decoder(_Response)
    _UNSET: Any = msgspec.UNSET
    _ERRORS: tuple[type[Exception], ...] = (
        msgspec.DecodeError,
        msgspec.ValidationError,
        RecursionError,
    )
else:  # pragma: no cover
    _READ = _UNSET = None
    _ERRORS = (RecursionError,)


def decode(data: bytes) -> Any:
    """``data`` as ``snodo.core.jsonrpc.decode`` reads it, but for a complete result's large
    members, each kept as an ``orjson.Fragment`` of its bytes."""
    if _READ is None or len(data) < SMALL_BODY:
        return jsonrpc.decode(data)
    try:
        message = _READ.decode(data)
    except _ERRORS:
        return jsonrpc.decode(data)  # its error, or its value where msgspec differs
    result = message.result
    if (
        result is _UNSET
        or message.jsonrpc is _UNSET
        or message.id is _UNSET
        or message.error is not _UNSET
        or message.method is not _UNSET
    ):
        return jsonrpc.decode(data)
    if not data.isascii():
        try:  # msgspec reads strings' bytes as they are: the UTF-8 is checked here
            data.decode("utf-8")
        except UnicodeDecodeError:
            return jsonrpc.decode(data)
    kind = result.get("resultType")
    if kind is not None and bytes(kind) != b'"complete"':
        return jsonrpc.decode(data)  # its questions and state are the proxy's to read
    members: dict[str, Any] = {}
    for key, raw in result.items():
        encoded = bytes(raw)
        # A line end between tokens would end a stdio or SSE front's line inside the
        # answer: such a member (pretty-printed, say) is decoded, to be written compact.
        if (
            len(encoded) <= SMALL_MEMBER
            or key == "_meta"
            or encoded.find(b"\n") >= 0
            or encoded.find(b"\r") >= 0
            or _collapses(encoded)
        ):
            members[key] = jsonrpc.decode(encoded)
        else:
            members[key] = orjson.Fragment(encoded)
    response: dict[str, Any] = {"jsonrpc": message.jsonrpc, "id": message.id, "result": members}
    return response


def _collapses(encoded: bytes) -> bool:
    """Whether decoding a member's bytes would drop a key given twice in one object (or
    its values are too many to build here): then it is decoded, never kept.

    Proven by orjson's value of the bytes, written again: the very bytes (what orjson
    and so snodo write), or with as many colons, since every key in the text is followed
    by one and the value keeps one per key (a string's colons are the same in both
    unless one is escaped, ``\\u003a``: then the keys themselves are read).
    """
    structure = encoded.translate(None, _NOT_STRUCTURE)
    if structure.find(b"{") < 0:
        return False  # no object, no key
    if len(structure) >= jsonrpc.MAX_VALUES:  # brackets and commas: an upper bound of values
        return True
    try:
        written = orjson.dumps(orjson.loads(encoded))
    except TypeError:  # past orjson's nesting bound, far past the decoded path's
        return True
    except orjson.JSONDecodeError:  # a number beyond a double, say, which passes as written
        return _duplicated(encoded)
    if written == encoded:
        return False
    if encoded.find(b"\\u003") >= 0:
        return _duplicated(encoded)
    return encoded.count(b":") != written.count(b":")


_NOT_STRUCTURE = bytes(code for code in range(256) if code not in b"{[,")
"""Every byte but brackets that open and commas: deleted, what is left counts values."""


class _Duplicated(ValueError):
    """A key given twice in one object, found by ``_EXACT``."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Duplicated
    return found


_EXACT = json.JSONDecoder(object_pairs_hook=_pairs)
"""Reads what orjson does not, each object's keys checked (slower: every object is a call)."""


def _duplicated(encoded: bytes) -> bool:
    """``_collapses`` by the keys themselves, where colons cannot be counted or orjson
    refuses the bytes: read with the standard decoder; on anything but a key given
    twice, the verdict stays ``snodo.core.jsonrpc.decode``'s."""
    try:
        _EXACT.decode(encoded.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError):
        return True
    return False


def kept(value: Any) -> bool:
    """Whether ``value`` is a member ``decode`` kept as its bytes."""
    return orjson is not None and type(value) is orjson.Fragment
