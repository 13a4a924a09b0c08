"""A response whose result keeps its large members as their bytes, for a proxy to pass on.

A proxy that decodes a backend's result only to encode it again spends most of its
time on a large answer building values it never looks at: a result of 20,000 text
blocks (about 1 MB) costs 3.2 ms to decode with orjson and 0.4 ms to encode, against
0.3 ms to read it here. ``decode`` reads the envelope and the result's members; a
member larger than ``SMALL_MEMBER`` bytes is checked (well-formed JSON, valid UTF-8,
no NaN) and kept as an ``orjson.Fragment`` of its bytes, which ``snodo.jsonrpc.encode``
writes out as they are. Everything the proxy reads stays decoded: ``_meta``, the small
members (``isError``, ``resultType``, a cursor), and the whole of a result that is not
complete (its questions and state).

Nesting and value counts are not bounded for the kept bytes as they are for decoded
messages (``snodo.jsonrpc.MAX_DEPTH``, ``MAX_VALUES``): those bounds are on what building
values costs here, and nothing is built (msgspec's own bound on nesting still holds).
A body smaller than ``SMALL_BODY``, an error, a request or notification, or anything
msgspec does not read as a response is decoded whole by ``snodo.jsonrpc.decode``, whose
verdict stands; so is every body when msgspec or orjson is not installed.
"""

from __future__ import annotations

from typing import Any, Final

from snodo import jsonrpc

try:
    import msgspec
    import orjson
except ImportError:  # pragma: no cover - the http extra brings both
    msgspec = None  # type: ignore[assignment]
    orjson = None  # type: ignore[assignment]

__all__ = ["SMALL_BODY", "SMALL_MEMBER", "decode", "kept", "read"]

SMALL_BODY: Final = 4096
"""Bodies below this are decoded whole: orjson builds them as fast as they are read here."""
SMALL_MEMBER: Final = 256
"""Members up to this many bytes are decoded, so that what is small stays readable."""

if msgspec is not None and orjson is not None:

    class _Response(msgspec.Struct):
        """A JSON-RPC response as read here: the result's members left as bytes."""

        jsonrpc: Any = None
        id: Any = None
        result: dict[str, msgspec.Raw] | None = None
        error: Any = None
        method: Any = None

    _READ: Any = msgspec.json.Decoder(_Response)
    _ERRORS: tuple[type[Exception], ...] = (
        msgspec.DecodeError,
        msgspec.ValidationError,
        RecursionError,
    )
else:  # pragma: no cover
    _READ = None
    _ERRORS = (RecursionError,)


def decode(data: bytes) -> Any:
    """``data`` as ``snodo.jsonrpc.decode`` reads it, but for a complete result's large
    members, each kept as an ``orjson.Fragment`` of its bytes."""
    if _READ is None or len(data) < SMALL_BODY:
        return jsonrpc.decode(data)
    try:
        message = _READ.decode(data)
    except _ERRORS:
        return jsonrpc.decode(data)  # its error, or its value where msgspec differs
    result = message.result
    if result is None or message.error is not None or message.method is not None:
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
        if len(encoded) <= SMALL_MEMBER or key == "_meta":
            members[key] = jsonrpc.decode(encoded)
        else:
            members[key] = orjson.Fragment(encoded)
    response: dict[str, Any] = {"jsonrpc": message.jsonrpc, "id": message.id, "result": members}
    return response


def read(message: Any) -> Any:
    """``message`` as ``snodo.jsonrpc.decode`` reads it: a response ``decode`` kept
    members of, with those decoded (for a request that did not ask to keep them)."""
    result = message.get("result") if type(message) is dict else None
    if type(result) is not dict or not any(kept(value) for value in result.values()):
        return message
    members = {
        key: jsonrpc.decode(orjson.dumps(value)) if kept(value) else value
        for key, value in result.items()
    }
    return {**message, "result": members}


def kept(value: Any) -> bool:
    """Whether ``value`` is a member ``decode`` kept as its bytes."""
    return orjson is not None and type(value) is orjson.Fragment
