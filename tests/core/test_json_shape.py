"""The JSON shape bounds (values, nesting) decided from the text alone agree with the
decoded value, whatever the strings in it hold."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from snodo import jsonrpc
from snodo.errors import ParseError

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
