"""Tool arguments bound without the arguments model equal what the model returns."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from snodo.tools import make_tool


def plain(text: str, count: int, ratio: float, flag: bool = False, note: str = "") -> str:
    """Only str, int, float and bool parameters, scalar defaults."""
    return text


def _by_model(arguments: dict[str, Any]) -> dict[str, Any] | str:
    tool = make_tool(plain)
    assert tool.model is not None
    try:
        values = tool.model.model_validate(arguments)
    except ValueError as exc:
        return type(exc).__name__
    return {name: getattr(values, name) for name in type(values).model_fields}


def _bound(arguments: dict[str, Any]) -> dict[str, Any] | str:
    try:
        return make_tool(plain).bind(arguments)
    except ValueError as exc:
        return type(exc).__name__


def test_a_tool_of_plain_parameters_gets_the_fast_binding() -> None:
    assert make_tool(plain).plain is not None

    def rich(items: list[int]) -> str:
        return ""

    def optional(note: str | None = None) -> str:
        return ""

    assert make_tool(rich).plain is None
    assert make_tool(optional).plain is None


scalars = st.one_of(
    st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.booleans(), st.none()
)


@given(
    st.dictionaries(
        st.sampled_from(["text", "count", "ratio", "flag", "note", "other"]), scalars, max_size=6
    )
)
def test_binding_equals_the_model_with_types_kept(arguments: dict[str, Any]) -> None:
    expected, got = _by_model(arguments), _bound(arguments)
    assert got == expected
    if isinstance(got, dict) and isinstance(expected, dict):
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


def test_exact_types_are_passed_through_and_defaults_filled() -> None:
    got = make_tool(plain).bind({"text": "a", "count": 2, "ratio": 0.5})
    assert got == {"text": "a", "count": 2, "ratio": 0.5, "flag": False, "note": ""}
    assert type(make_tool(plain).bind({"text": "a", "count": 2, "ratio": 1})["ratio"]) is float
