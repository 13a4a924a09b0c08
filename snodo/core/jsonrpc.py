"""JSON-RPC 2.0 framing: bytes in, a classified message out; responses back to bytes.

Only the envelope is checked here (basic/index.mdx): a request has ``jsonrpc: "2.0"``,
a string ``method``, an ``id`` that is a string or an integer (never null, never a
float or a boolean), and ``params`` that is an object when present. Anything else is
-32600, with the id echoed when it could be read. Batches (JSON arrays) are not part
of this revision and are refused as invalid requests.
"""

from __future__ import annotations

import json
import math
import re
from enum import Enum
from typing import Any, Final, NamedTuple
from uuid import UUID

from snodo.core.errors import InvalidRequest, McpError, ParseError
from snodo.core.input_requests import BuiltRequest

try:  # optional (in snodo[http]): reads a request about four times faster than json
    import orjson as _orjson
except ImportError:  # pragma: no cover - the standard decoder alone gives the same values
    _orjson = None  # type: ignore[assignment]

__all__ = [
    "UNREAD",
    "Notification",
    "Request",
    "Response",
    "as_json",
    "decode",
    "encode",
    "error_response",
    "parse",
    "read_utf8",
    "result_response",
    "write_fast",
]

RequestId = str | int

MAX_DEPTH = 64
"""Deepest JSON nesting accepted; deeper input is refused before it reaches handlers."""

MAX_VALUES = 100_000
"""Most values (containers and scalars) one message may hold. A 4 MiB body of empty
arrays is 1.4 million of them, and building each costs far more than reading its two
bytes; real messages hold a few thousand at most (lists are paginated)."""

TOO_MANY_VALUES = "Parse error: JSON holds too many values"
TOO_DEEP = "Parse error: JSON nested too deeply"
_NOT_BRACKET = bytes(code for code in range(128) if code not in b"[]{}")
"""Every ASCII byte but a bracket: deleted, only the brackets are left."""
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NO_SPACE = str.maketrans("", "", " \t\n\r")
_LONG_DIGITS = re.compile(r"[0-9]{19}")
"""Digits that may spell an integer beyond 64 bits, which orjson would read as a float."""
_SKELETON = bytes.maketrans(b"123456789[", b"000000000{")
_LONG_ZEROS = b"0" * 19
"""The same test on UTF-8 bytes: every digit made 0 (and every ``[`` a ``{``, for one
count of containers), then one substring search; a regular expression over text costs
ten times more."""


# Named tuples: immutable as frozen dataclasses are, and built in a third of the time
# (every message is one).
class Request(NamedTuple):
    """A request: it has an id and is answered."""

    id: RequestId
    method: str
    params: dict[str, Any]


class Notification(NamedTuple):
    """A notification: no id, no answer."""

    method: str
    params: dict[str, Any]


class Response(NamedTuple):
    """A response or error sent by the peer (clients read these)."""

    id: RequestId | None
    result: dict[str, Any] | None
    error: dict[str, Any] | None


class _Unreadable(McpError):
    """Envelope error that also remembers the id, when one could be read."""

    def __init__(self, error: McpError, request_id: RequestId | None) -> None:
        super().__init__(error.message, error.data)
        self.code = error.code
        self.request_id = request_id


def _shape_error(text: str) -> str | None:
    """Why ``text`` holds too many values or nests too deeply, from its brackets, commas
    and quotes alone, before any value is built. Every step is a C-level pass over the
    text: the cost is linear in its size, never in the number of containers.

    Counts over the raw text are upper bounds (strings may hold brackets and commas),
    so most messages stop at the first test. Past it, string literals are replaced: with
    escapes removed, text outside strings is every other piece between quotes. Then the
    values are counted exactly from commas and brackets, and the depth is how many
    rounds of deleting empty pairs it takes to empty the brackets. Text that is not
    JSON may pass; the decoder refuses it.
    """
    containers = text.count("[") + text.count("{")
    if containers <= MAX_DEPTH and containers + text.count(",") < MAX_VALUES:
        return None
    unescaped = text.replace("\\\\", "").replace('\\"', "") if "\\" in text else text
    if unescaped.count('"') > 4 * MAX_VALUES:  # strings are values, or keys of values
        return TOO_MANY_VALUES
    # A 0 stands in for each string: ``[""]`` must not look like an empty array.
    skeleton = "0".join(unescaped.split('"')[::2]).translate(_NO_SPACE)
    containers = skeleton.count("[") + skeleton.count("{")
    empty = skeleton.count("[]") + skeleton.count("{}")
    # Each comma separates two values of a container; a container's first value has
    # none, and an empty container has no first value: one more, for the outermost.
    if skeleton.count(",") + containers - empty + 1 > MAX_VALUES:
        return TOO_MANY_VALUES
    if containers <= MAX_DEPTH:
        return None
    # One kind of bracket, so each round peels exactly one level of nesting.
    # Outside strings what is not a bracket is ASCII or not JSON; dropped either way.
    outside = skeleton.encode("ascii", "ignore")
    brackets = outside.translate(_ONE_KIND, _NOT_BRACKET)
    for _ in range(MAX_DEPTH):
        peeled = brackets.replace(b"[]", b"")
        if not peeled or peeled == brackets:
            return None
        brackets = peeled
    return TOO_DEEP if brackets.find(b"[]") >= 0 else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def finite_float(literal: str) -> float:
    """A JSON number literal as a float; one that overflows (``1e400``) is refused like
    the NaN and Infinity constants, since JSON has no infinite numbers."""
    value = float(literal)
    if math.isinf(value):
        raise ValueError(f"{literal[:20]} overflows a double")
    return value


def as_json(value: Any) -> Any:
    """What the encoders write for the two non-JSON types orjson writes natively: a UUID
    as its text, an Enum member as its value; anything else not JSON is refused, as json
    does."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    # Subclasses reach here from orjson only. A dict or list subclass that reads as its
    # base type (snodo.core.input_requests's frozen requests) is written as the standard
    # encoder would.
    if isinstance(value, dict) and type(value).items is dict.items:
        return dict(value)
    if isinstance(value, list) and type(value).__iter__ is list.__iter__:
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=finite_float)
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=as_json
)
"""Built once: json.dumps/loads with options build a new coder on every call."""
_ORJSON_OPTIONS = (
    0
    if _orjson is None
    else _orjson.OPT_PASSTHROUGH_SUBCLASS
    | _orjson.OPT_PASSTHROUGH_DATACLASS
    | _orjson.OPT_PASSTHROUGH_DATETIME
)
"""Subclasses of the JSON types, dataclasses and datetimes go to ``as_json``, which
refuses them as the standard encoder does (it would write a str or int subclass itself,
so orjson's refusal sends those to it)."""


_SORTED_OPTIONS = 0 if _orjson is None else _ORJSON_OPTIONS | _orjson.OPT_SORT_KEYS


def _as_wire_json(value: Any) -> Any:
    """``as_json`` for messages: a built request, which cannot change, is written once
    and its text (an ``orjson.Fragment``) reused on every round. Text with sorted keys
    does not use it: that text is in the order the request was built."""
    if type(value) is BuiltRequest:
        if value.written is None:
            value.written = _orjson.Fragment(_orjson.dumps(dict(value), as_json, _ORJSON_OPTIONS))
        return value.written
    return as_json(value)


def write_fast(value: Any, sort_keys: bool = False) -> bytes | None:
    """orjson's text of ``value``, or None where orjson is not installed or refuses it.

    Not yet the standard encoder's text: orjson writes NaN and the infinities as
    ``null``, and some floats differently, so each caller checks the text (``encode``
    and ``snodo.core.state.canonical.encode`` say how) before trusting it.
    """
    if _orjson is None:
        return None
    try:
        if sort_keys:
            written: bytes = _orjson.dumps(value, as_json, _SORTED_OPTIONS)
        else:
            written = _orjson.dumps(value, _as_wire_json, _ORJSON_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return None
    return written


UNREAD: Final = object()
"""What ``read_utf8`` returns when orjson did not read the text."""


def read_utf8(data: bytes, max_containers: int, max_values: int | None = None) -> Any:
    """The value of UTF-8 JSON ``data`` as orjson reads it, or ``UNREAD``.

    Read only when orjson is installed and its value is certainly the standard decoder's
    (no run of 19 digits where it read a float: an integer it would read as a float),
    and the value nests at most ``max_containers`` levels deep and, with
    ``max_values``, the text is shorter than that or holds fewer brackets and commas.
    Whatever orjson refuses, invalid UTF-8 and encoded surrogates included, is
    ``UNREAD``: the caller's standard decoder has the last word.

    Compiled, the read value is walked (``_shape``): a request is a few dozen values in
    a few hundred bytes, and a native walk of them costs less than scans of the bytes.
    Interpreted, the bytes are scanned instead (``_read_scanned``), as a walk in Python
    costs more. Both give the same answers (tests/core/test_jsonrpc.py).
    """
    if _orjson is None:
        return UNREAD
    if not _COMPILED or (max_values is not None and len(data) >= max_values):
        return _read_scanned(data, max_containers, max_values)
    return _read_walked(data, max_containers)


_COMPILED: Final = not __file__.endswith(".py")
"""Whether this module runs compiled (setup.py), which ``read_utf8`` reads by."""
_PLAIN: Final = 0
_FLOAT: Final = 1
_TOO_DEEP: Final = 2


def _read_walked(data: bytes, max_containers: int) -> Any:
    """``read_utf8`` by a walk of the value orjson read (no limit on values)."""
    try:
        value = _orjson.loads(data)
    except _orjson.JSONDecodeError:
        return UNREAD
    shape = _shape(value, max_containers)
    if shape == _PLAIN:
        return value
    # A float may be an integer beyond 64 bits, which the standard decoder keeps.
    if shape == _FLOAT and data.translate(_SKELETON).find(_LONG_ZEROS) < 0:
        return value
    return UNREAD


def _shape(value: object, room: int) -> int:
    """``_TOO_DEEP`` when ``value`` nests more than ``room`` containers deep, else
    ``_FLOAT`` when it holds a float, else ``_PLAIN``. Written for the compiler: each
    ``isinstance`` on a builtin type is a type check, and a dict or list is iterated
    natively (orjson gives exact types, so none is a subclass). The two loops are one
    loop written twice on purpose: over an ``Iterable`` shared by both, the iteration
    is generic, and a request costs 3,600-4,500 instructions more (instructions.py)."""
    if isinstance(value, dict):
        if room <= 0:
            return _TOO_DEEP
        shape = _PLAIN
        for item in value.values():
            if isinstance(item, (str, int)) or item is None:  # bool is an int
                continue
            found = _shape(item, room - 1)
            if found == _TOO_DEEP:
                return _TOO_DEEP
            shape |= found
        return shape
    if isinstance(value, list):
        if room <= 0:
            return _TOO_DEEP
        shape = _PLAIN
        for item in value:
            if isinstance(item, (str, int)) or item is None:
                continue
            found = _shape(item, room - 1)
            if found == _TOO_DEEP:
                return _TOO_DEEP
            shape |= found
        return shape
    return _FLOAT if isinstance(value, float) else _PLAIN


def _read_scanned(data: bytes, max_containers: int, max_values: int | None) -> Any:
    """``read_utf8`` by scans of the bytes before orjson reads them.

    At most ``max_containers`` brackets and, with ``max_values``, fewer brackets and
    commas than that. Brackets, commas and digits are ASCII, so these counts mean on the
    bytes what they mean on the text (an upper bound: strings may hold them too).
    """
    skeleton = data.translate(_SKELETON)
    containers = skeleton.count(b"{")
    # find, not ``in``: on bytes, ``in`` first tries the operand as an integer and
    # raises and clears a TypeError on every call.
    if containers > max_containers or skeleton.find(_LONG_ZEROS) >= 0:
        return UNREAD
    # Each bracket or comma is a byte of its own: shorter text cannot reach max_values.
    if (
        max_values is not None
        and len(data) >= max_values
        and containers + skeleton.count(b",") >= max_values
    ):
        return UNREAD
    try:
        return _orjson.loads(data)
    except _orjson.JSONDecodeError:
        return UNREAD


def decode(data: bytes | str) -> Any:
    """Parse JSON text, refusing NaN, Infinity, overflowing numbers, over-deep nesting and
    too many values (-32700). Shape is checked before decoding, so refused text costs a
    few scans of its bytes and nothing more."""
    if isinstance(data, bytes) and data[:1] == b"{":  # the usual request, read from bytes
        # Interpreted, ``read_utf8`` would take the scans: called here, a frame fewer.
        if _COMPILED or _orjson is None:
            value = read_utf8(data, MAX_DEPTH, MAX_VALUES)
        else:
            value = _read_scanned(data, MAX_DEPTH, MAX_VALUES)
        if value is not UNREAD:
            return value
    utf8: bytes | None = None  # the bytes, when they are the text's UTF-8
    try:
        if not isinstance(data, bytes):
            text = data
        elif data[:1] == b"{" and data[1:2] != b"\x00":  # what detect_encoding calls UTF-8
            text = data.decode("utf-8", "surrogatepass")
            utf8 = data
        else:
            text = data.decode(json.detect_encoding(data), "surrogatepass")
    except ValueError as exc:
        raise ParseError() from exc
    problem = _shape_error(text)
    if problem is not None:
        raise ParseError(problem)
    # orjson where it gives exactly the standard decoder's value (ints stay ints, floats
    # floats); anything it refuses (NaN, overflow, lone surrogates, big integers) goes
    # to the standard decoder, whose verdict stands. A run of 19 digits is looked for on
    # the bytes where there are UTF-8 ones: a translation and a search, in C, where the
    # expression tries a match at every digit of the text.
    if utf8 is not None:
        long_digits = utf8.translate(_SKELETON).find(_LONG_ZEROS) >= 0
    else:
        long_digits = _LONG_DIGITS.search(text) is not None
    if _orjson is not None and not long_digits:
        try:
            return _orjson.loads(text if utf8 is None else utf8)
        except _orjson.JSONDecodeError:
            pass
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError() from exc


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parse(message: Any) -> Request | Notification | Response:
    """Classify one decoded JSON-RPC message; raise ``McpError`` for a bad envelope.

    The raised error carries ``request_id`` (possibly None) so the caller can answer.
    """
    if not isinstance(message, dict):
        raise _Unreadable(InvalidRequest("Invalid request: not a JSON-RPC object"), None)
    raw_id = message.get("id")
    # _valid_id, written out: every message passes here.
    request_id = (
        raw_id
        if isinstance(raw_id, str) or (isinstance(raw_id, int) and not isinstance(raw_id, bool))
        else None
    )
    if message.get("jsonrpc") != "2.0":
        raise _Unreadable(InvalidRequest('Invalid request: jsonrpc must be "2.0"'), request_id)
    method = message.get("method")
    if method is None and ("result" in message or "error" in message):
        if not _valid_id(raw_id) and raw_id is not None:
            raise _Unreadable(InvalidRequest("Invalid response id"), None)
        result, error = message.get("result"), message.get("error")
        present = result if "result" in message else error
        if ("result" in message) == ("error" in message) or not isinstance(present, dict):
            raise _Unreadable(InvalidRequest("Invalid response"), request_id)
        return Response(request_id, result, error)
    if not isinstance(method, str) or not method:
        raise _Unreadable(InvalidRequest("Invalid request: method must be a string"), request_id)
    params = message.get("params", {})
    if not isinstance(params, dict):
        raise _Unreadable(InvalidRequest("Invalid request: params must be an object"), request_id)
    if "id" not in message:
        return Notification(method, params)
    if request_id is None:
        raise _Unreadable(
            InvalidRequest("Invalid request: id must be a string or an integer"), None
        )
    # As Request(...) builds it, minus the named tuple's __new__, a Python function: one
    # interpreted frame less per message where this module is compiled.
    return tuple.__new__(Request, (request_id, method, params))


def error_id(exc: McpError) -> RequestId | None:
    return exc.request_id if isinstance(exc, _Unreadable) else None


def result_response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    """The response carrying ``result`` for the request ``request_id``."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: McpError) -> dict[str, Any]:
    """An error response; the id is left out, not null, when it could not be read."""
    response: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        response["id"] = request_id
    response["error"] = error.to_error()
    return response


def _passes_on(message: dict[str, Any]) -> bool:
    """Whether ``message`` holds a proxy's kept bytes (``decode_passthrough``) and no NaN or
    infinity elsewhere: its ``null`` is then a real one (kept bytes hold no NaN)."""
    result = message.get("result")
    if _orjson is None or type(result) is not dict:
        return False
    kept = False
    for value in result.values():
        if type(value) is _orjson.Fragment:
            kept = True
        elif not _finite(value):
            return False
    return kept


def decode_passthrough(message: Any) -> Any:
    """``message`` with the members of its result a proxy kept as their bytes
    (``orjson.Fragment``, ``snodo.client.transports.passthrough``) decoded; itself if none."""
    result = message.get("result") if type(message) is dict else None
    if _orjson is None or type(result) is not dict:
        return message
    fragment = _orjson.Fragment
    if not any(type(value) is fragment for value in result.values()):
        return message
    read = {k: decode(_orjson.dumps(v)) if type(v) is fragment else v for k, v in result.items()}
    return {**message, "result": read}


def _finite(value: Any) -> bool:
    """Whether ``value`` holds no NaN or infinity, at any depth."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(item) for item in value)
    return True


def encode(message: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON on one line (no embedded newlines, as stdio framing needs).

    orjson writes it when installed, unless its text holds ``null``: orjson writes NaN and
    the infinities as null where the standard encoder refuses them, so that text, and
    whatever orjson refuses (lone surrogates, integers beyond 64 bits, keys that are not
    strings, str and int subclasses, nesting past 254), is written by the standard
    encoder, whose verdict stands. Either way the same values come out.
    """
    if _orjson is not None:  # write_fast, written out: every answer passes here
        try:
            fast: bytes = _orjson.dumps(message, _as_wire_json, _ORJSON_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError is a TypeError
            pass
        else:
            if fast.find(b"null") < 0 or _passes_on(message):  # find: see read_utf8
                return fast
        message = decode_passthrough(message)  # the standard encoder cannot write kept bytes
    text = _ENCODER.encode(message)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from the peer: escape it, stay valid UTF-8
        return json.dumps(message, separators=(",", ":"), allow_nan=False, default=as_json).encode(
            "ascii"
        )
