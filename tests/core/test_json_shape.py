"""The JSON shape bounds (values, nesting) decided from the text alone agree with the
decoded value, whatever the strings in it hold."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from snodo.core import jsonrpc
from snodo.core.errors import ParseError

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
