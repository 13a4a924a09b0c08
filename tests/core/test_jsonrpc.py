"""snodo.core.jsonrpc: reading, writing and bounding JSON-RPC messages.

Reading and writing go through orjson where it is installed; these tests compare it with
the standard library's decoder and encoder, value for value and type for type.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import re
import uuid
from collections import OrderedDict
from importlib.util import find_spec
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from snodo.core import jsonrpc
from snodo.core.errors import ParseError
from snodo.core.input_requests import BuiltRequest, FrozenArray

# Without orjson both sides are the standard library, and these would compare it with itself.
needs_orjson = pytest.mark.skipif(find_spec("orjson") is None, reason="orjson is in the dev extra")


# Reading: requests read with orjson give exactly the standard decoder's values, types included.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def _typed(value: Any) -> Any:
    """The value with every scalar tagged by its exact type, for a type-exact comparison."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    return (type(value).__name__, value)


def _standard(text: str) -> Any:
    try:
        return _typed(jsonrpc._DECODER.decode(text))
    except ValueError:
        return "refused"


def _ours(text: str) -> Any:
    try:
        return _typed(jsonrpc.decode(text.encode("utf-8", "surrogatepass")))
    except ParseError:
        return "refused"


@needs_orjson
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.booleans())
def test_decoded_values_equal_the_standard_decoders(message: dict[str, Any], ascii_: bool) -> None:
    text = json.dumps(message, ensure_ascii=ascii_)
    assert _ours(text) == _standard(text)


@needs_orjson
@pytest.mark.parametrize(
    "text",
    [
        '{"id": 18446744073709551616}',
        '{"id": -9223372036854775809}',
        '{"n": 1e400}',
        '{"n": NaN}',
        '{"s": "\\ud800"}',
        '{"a": 1, "a": 2.0}',
        '{"n": -0, "f": -0.0, "e": 1E2}',
        '{"s": "tab\tinside"}',
    ],
)
def test_edge_cases_decode_as_the_standard_decoder_does(text: str) -> None:
    assert _ours(text) == _standard(text)


@needs_orjson
def test_an_integer_beyond_64_bits_stays_an_integer() -> None:
    assert jsonrpc.decode(b'{"id": 18446744073709551616}') == {"id": 2**64}
    assert type(jsonrpc.decode(b'{"id": 18446744073709551616}')["id"]) is int


@needs_orjson
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-32-be"])
def test_a_long_integer_in_a_message_of_many_objects_stays_an_integer(encoding: str) -> None:
    # More objects than MAX_DEPTH: the text's shape is checked, then its digits looked
    # for on the UTF-8 bytes, or on the text in any other encoding.
    rows = ",".join(f'{{"n": {n}}}' for n in range(jsonrpc.MAX_DEPTH + 10))
    text = f'{{"id": 18446744073709551616, "rows": [{rows}]}}'
    decoded = jsonrpc.decode(text.encode(encoding))
    assert _ours(text) == _standard(text)
    assert decoded == json.loads(text)
    assert type(decoded["id"]) is int and decoded["id"] == 2**64


# Writing: answers written with orjson carry exactly the values the standard encoder writes, and
# what the standard encoder refuses is refused the same way.
class Colour(enum.Enum):
    RED = 1
    BLUE = ("deep", 1.5)


class Size(enum.IntEnum):
    LARGE = 3


class Mode(enum.StrEnum):
    FAST = "fast"


class Name(str):
    pass


class Sorted(dict[str, Any]):
    """A mapping that reads differently from its stored items."""

    def items(self) -> Any:
        return sorted(dict.items(self))


class Frozen(dict[str, Any]):
    __slots__ = ()


@dataclasses.dataclass
class Point:
    x: int


odd_scalars = st.sampled_from(
    [
        float("nan"),
        float("inf"),
        -float("inf"),
        "\ud800",
        2**64,
        -(2**63) - 1,
        uuid.UUID(int=7),
        Colour.RED,
        Colour.BLUE,
        Size.LARGE,
        Mode.FAST,
        Name("plain"),
        True,
        None,
        datetime.date(2026, 1, 1),
        Point(1),
    ]
)
encodable = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=8)
    | odd_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4) | st.integers(0, 9), inner, max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3).map(OrderedDict)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3).map(Sorted)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3).map(Frozen)
        | st.lists(inner, max_size=3).map(FrozenArray)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3).map(BuiltRequest)
    ),
    max_leaves=20,
)


def _written(message: dict[str, Any], monkeypatch: pytest.MonkeyPatch, fast: bool) -> Any:
    with monkeypatch.context() as patched:
        if not fast:
            patched.setattr(jsonrpc, "_orjson", None)
        try:
            return json.loads(jsonrpc.encode(message))
        except (TypeError, ValueError) as exc:
            return type(exc).__name__


@needs_orjson
@given(st.dictionaries(st.text(max_size=4), encodable, max_size=4))
def test_orjson_writes_what_the_standard_encoder_writes(message: dict[str, Any]) -> None:
    monkeypatch = pytest.MonkeyPatch()
    assert _written(message, monkeypatch, True) == _written(message, monkeypatch, False)


@needs_orjson
def test_a_built_request_is_written_once_and_its_text_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = BuiltRequest({"method": "roots/list", "params": {"note": "é", "n": [1, 2]}})
    message = {"id": 1, "result": {"inputRequests": {"a": built, "b": built}}}
    first = jsonrpc.encode(message)
    assert built.written is not None
    assert jsonrpc.encode(message) == first
    assert _written(message, monkeypatch, False) == json.loads(first)


@needs_orjson
def test_non_finite_numbers_are_refused_as_before() -> None:
    for number in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="Out of range float"):
            jsonrpc.encode({"result": {"structuredContent": {"x": number}}})


@needs_orjson
def test_a_uuid_and_enum_members_are_written_as_their_values() -> None:
    written = jsonrpc.encode({"a": uuid.UUID(int=7), "b": Colour.BLUE, "c": Size.LARGE})
    assert written == b'{"a":"00000000-0000-0000-0000-000000000007","b":["deep",1.5],"c":3}'


@needs_orjson
def test_other_types_stay_refused() -> None:
    for value in (Point(1), datetime.date(2026, 1, 1), object()):
        with pytest.raises(TypeError, match="is not JSON serializable"):
            jsonrpc.encode({"x": value})


@needs_orjson
def test_a_lone_surrogate_is_escaped_and_non_ascii_stays_raw() -> None:
    assert jsonrpc.encode({"x": "\ud800"}) == b'{"x":"\\ud800"}'
    assert jsonrpc.encode({"x": "é"}) == '{"x":"é"}'.encode()


# Shape: the bounds (values, nesting) decided from the text alone agree with the
# decoded value, whatever the strings in it hold.
# Strings full of what the text scan must not mistake for structure.
tricky = st.text(alphabet='[]{},:"\\ab\u00e9', max_size=8)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky, inner, max_size=4),
    max_leaves=20,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def count(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(map(count, value.values()))
    if isinstance(value, list):
        return 1 + sum(map(count, value))
    return 1


def wrap(value: Any, levels: list[bool]) -> Any:
    for as_object in levels:
        value = {"k[": value} if as_object else [value]
    return value


@settings(max_examples=300, deadline=None)
@given(values, st.lists(st.booleans(), max_size=70), st.booleans())
def test_nesting_is_refused_exactly_past_the_limit(
    value: Any, levels: list[bool], ascii_only: bool
) -> None:
    wrapped = wrap(value, levels)
    text = json.dumps(wrapped, ensure_ascii=ascii_only)
    if depth(wrapped) > jsonrpc.MAX_DEPTH:
        with pytest.raises(ParseError, match="nested too deeply"):
            jsonrpc.decode(text)
    else:
        assert jsonrpc.decode(text) == wrapped


@settings(max_examples=500, deadline=None)
@given(values, st.integers(min_value=1, max_value=40), st.sampled_from([None, 0, 2]), st.booleans())
@example([""], 3, None, False)  # a string must not make its array look empty
def test_values_are_counted_exactly(
    value: Any, limit: int, indent: int | None, in_object: bool
) -> None:
    """Refused exactly past the limit, whatever the strings hold; an object is read by
    the fast path, an array by the standard one."""
    whole: Any = {"v": [value, 0]} if in_object else [value, 0]
    text = json.dumps(whole, indent=indent)
    saved = jsonrpc.MAX_VALUES
    jsonrpc.MAX_VALUES = limit
    try:
        held = count(whole)
        try:
            decoded = jsonrpc.decode(text)
        except ParseError as exc:
            assert exc.message == jsonrpc.TOO_MANY_VALUES
            assert held > limit
        else:
            assert decoded == whole
            assert held <= limit
    finally:
        jsonrpc.MAX_VALUES = saved


@pytest.mark.parametrize(
    "text",
    ["1e400", "[-1e400]", '{"a":1E+309}', "[1.8e308]", "NaN", "[Infinity]", "-Infinity"],
)
def test_numbers_beyond_a_double_are_parse_errors(text: str) -> None:
    with pytest.raises(ParseError):
        jsonrpc.decode(text)


def test_numbers_inside_a_double_still_read() -> None:
    assert jsonrpc.decode("[1e308,-1.7976931348623157e308,1e-400,5]") == [
        1e308,
        -1.7976931348623157e308,
        0.0,
        5,
    ]


numbers = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
numeric_values = st.recursive(
    st.none() | st.booleans() | numbers | tricky,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(tricky, inner, max_size=4),
    max_leaves=20,
)


def canonical(value: Any) -> str:
    """Text that tells ``1`` from ``1.0`` and ``True``: equal only for the same value."""
    return json.dumps(value, sort_keys=True)


@settings(max_examples=400, deadline=None)
@given(numeric_values, st.lists(st.booleans(), max_size=70), st.integers(1, 80))
@example([12345678901234567890123, 1.5], [], 64)  # beyond 64 bits, beside a float
@example({"id": -9223372036854775809}, [], 64)  # just below the 64-bit range
@example({"id": 1234567890123456789}, [], 64)  # 19 digits, inside it
def test_both_fast_reads_give_the_standard_value_or_leave_it(
    value: Any, levels: list[bool], limit: int
) -> None:
    """The walk (compiled) and the scan (interpreted) each read a value exactly as the
    standard decoder does, or leave it unread. The walk leaves it exactly when it nests
    past the limit, or holds a float (which orjson also makes of an integer beyond 64
    bits) and its text a run of 19 digits."""
    wrapped = wrap(value, levels)
    data = json.dumps(wrapped).encode()
    standard = json.loads(data)
    walked = jsonrpc._read_walked(data, limit)
    scanned = jsonrpc._read_scanned(data, limit, jsonrpc.MAX_VALUES)
    for read in (walked, scanned):
        if read is not jsonrpc.UNREAD:
            assert canonical(read) == canonical(standard)
    numbers = list(scalars(standard))
    beyond_64_bits = any(type(n) is int and not -(2**63) <= n < 2**64 for n in numbers)
    long_runs = re.search(rb"[0-9]{19}", data) is not None
    floats = beyond_64_bits or any(type(n) is float for n in numbers)
    assert (walked is jsonrpc.UNREAD) == (depth(wrapped) > limit or (floats and long_runs))


def scalars(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in scalars(item)]
    if isinstance(value, list):
        return [n for item in value for n in scalars(item)]
    return [value]


def test_a_request_reads_by_the_path_its_build_takes() -> None:
    """Bytes of a request go through ``read_utf8`` either way and give the same value;
    too deep is refused either way."""
    data = b'{"jsonrpc":"2.0","id":12345678901234567890123,"method":"m","params":{"x":1.5}}'
    assert jsonrpc.decode(data)["id"] == 12345678901234567890123
    deep = b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b"[" * 70 + b"]" * 70 + b"}"
    with pytest.raises(ParseError, match="nested too deeply"):
        jsonrpc.decode(deep)
