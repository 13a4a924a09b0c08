"""Requests read with orjson give exactly the standard decoder's values, types included."""

from __future__ import annotations

import json
from importlib.util import find_spec
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.core import jsonrpc
from snodo.core.errors import ParseError

# Without orjson both sides are the standard decoder, and these would compare it with itself.
pytestmark = pytest.mark.skipif(find_spec("orjson") is None, reason="orjson is in the dev extra")

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


@given(st.dictionaries(st.text(max_size=4), json_values, max_size=4), st.booleans())
def test_decoded_values_equal_the_standard_decoders(message: dict[str, Any], ascii_: bool) -> None:
    text = json.dumps(message, ensure_ascii=ascii_)
    assert _ours(text) == _standard(text)


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


def test_an_integer_beyond_64_bits_stays_an_integer() -> None:
    assert jsonrpc.decode(b'{"id": 18446744073709551616}') == {"id": 2**64}
    assert type(jsonrpc.decode(b'{"id": 18446744073709551616}')["id"]) is int


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
