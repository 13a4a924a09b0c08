"""Answers written with orjson carry exactly the values the standard encoder writes, and
what the standard encoder refuses is refused the same way."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from collections import OrderedDict
from importlib.util import find_spec
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.core import jsonrpc
from snodo.core.input_requests import BuiltRequest, FrozenArray

pytestmark = pytest.mark.skipif(find_spec("orjson") is None, reason="orjson is in the dev extra")


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
values = st.recursive(
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


@given(st.dictionaries(st.text(max_size=4), values, max_size=4))
def test_orjson_writes_what_the_standard_encoder_writes(message: dict[str, Any]) -> None:
    monkeypatch = pytest.MonkeyPatch()
    assert _written(message, monkeypatch, True) == _written(message, monkeypatch, False)


def test_a_built_request_is_written_once_and_its_text_reused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built = BuiltRequest({"method": "roots/list", "params": {"note": "é", "n": [1, 2]}})
    message = {"id": 1, "result": {"inputRequests": {"a": built, "b": built}}}
    first = jsonrpc.encode(message)
    assert built.written is not None
    assert jsonrpc.encode(message) == first
    assert _written(message, monkeypatch, False) == json.loads(first)


def test_non_finite_numbers_are_refused_as_before() -> None:
    for number in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="Out of range float"):
            jsonrpc.encode({"result": {"structuredContent": {"x": number}}})


def test_a_uuid_and_enum_members_are_written_as_their_values() -> None:
    written = jsonrpc.encode({"a": uuid.UUID(int=7), "b": Colour.BLUE, "c": Size.LARGE})
    assert written == b'{"a":"00000000-0000-0000-0000-000000000007","b":["deep",1.5],"c":3}'


def test_other_types_stay_refused() -> None:
    for value in (Point(1), datetime.date(2026, 1, 1), object()):
        with pytest.raises(TypeError, match="is not JSON serializable"):
            jsonrpc.encode({"x": value})


def test_a_lone_surrogate_is_escaped_and_non_ascii_stays_raw() -> None:
    assert jsonrpc.encode({"x": "\ud800"}) == b'{"x":"\\ud800"}'
    assert jsonrpc.encode({"x": "é"}) == '{"x":"é"}'.encode()
