"""A response whose result keeps its large members as their bytes, for a proxy to pass on.

A proxy that decodes a backend's result only to encode it again spends most of its
time on a large answer building values it never looks at: a result of 20,000 text
blocks (about 1 MB) costs 3.4 ms to decode with orjson (9.6 with
``snodo.core.jsonrpc.decode``'s checks) and 0.4 ms to encode, against 0.4 ms to read it
here. ``decode`` reads the envelope and the result's members; a member larger than
``SMALL_MEMBER`` bytes is checked (well-formed JSON, valid UTF-8, no NaN, no line end)
and kept as an ``orjson.Fragment`` of its bytes, which ``snodo.core.jsonrpc.encode`` writes
out as they are (``snodo.core.jsonrpc.decode_passthrough`` decodes them for a reader that needs the
values). Everything the proxy reads stays decoded: ``_meta``, the small members
(``isError``, ``resultType``, a cursor), and the whole of a result that is not complete
(its questions and state).

Nesting and value counts are not bounded for the kept bytes as they are for decoded
messages (``snodo.core.jsonrpc.MAX_DEPTH``, ``MAX_VALUES``): those bounds are on what building
values costs here, and nothing is built. msgspec's own bound on nesting (the recursion
limit, about a thousand levels) holds; a front that allows less refuses the answer.
Numbers pass as written: one beyond the largest float (``1e400``), which
``snodo.core.jsonrpc.decode`` refuses, reaches the front as the backend wrote it.
A body smaller than ``SMALL_BODY``, an error, a request or notification, or anything
msgspec does not read as a response is decoded whole by ``snodo.core.jsonrpc.decode``, whose
verdict stands; so is every body when msgspec or orjson is not installed.
"""

from __future__ import annotations

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
        ):
            members[key] = jsonrpc.decode(encoded)
        else:
            members[key] = orjson.Fragment(encoded)
    response: dict[str, Any] = {"jsonrpc": message.jsonrpc, "id": message.id, "result": members}
    return response


def kept(value: Any) -> bool:
    """Whether ``value`` is a member ``decode`` kept as its bytes."""
    return orjson is not None and type(value) is orjson.Fragment
