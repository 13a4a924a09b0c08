"""Tool arguments bound without the arguments model equal what the model returns."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from snodo.server import Server
from snodo.server.tools import make_tool, plain_bind
from tests.support.wire import answer, request


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


@given(
    st.dictionaries(
        st.sampled_from(["text", "count", "ratio", "flag", "note", "other"]), scalars, max_size=6
    )
)
def test_what_the_plain_binding_takes_the_input_schema_accepts(arguments: dict[str, Any]) -> None:
    """Dispatch skips the schema check for arguments the plain binding takes: sound only
    if the schema made from the same parameters accepts each of them."""
    tool = make_tool(plain)
    assert tool.plain is not None
    if plain_bind(tool.plain, arguments) is not None:
        assert tool.arguments.first_error(arguments) is None


def test_a_plain_call_with_a_bad_argument_is_still_answered_by_the_schema() -> None:
    server = Server("binding", "1.0.0")
    server.tool(plain)
    given = {"text": "a", "count": "two", "ratio": 0.5}
    result = answer(server, request("tools/call", {"name": "plain", "arguments": given}))
    assert result["result"]["isError"] is True
    assert result["result"]["content"][0]["text"].startswith("Invalid arguments for tool plain")


def test_exact_types_are_passed_through_and_defaults_filled() -> None:
    got = make_tool(plain).bind({"text": "a", "count": 2, "ratio": 0.5})
    assert got == {"text": "a", "count": 2, "ratio": 0.5, "flag": False, "note": ""}
    assert type(make_tool(plain).bind({"text": "a", "count": 2, "ratio": 1})["ratio"]) is float


def test_every_shape_of_callable_is_called_and_awaited_as_needed() -> None:
    """A sync tool runs with no coroutine; anything that hands back an awaitable (an
    async function, a partial of one, an object with an async ``__call__``, a sync
    function returning a coroutine) is awaited, and its failure is the tool's error."""

    def say(text: str) -> str:
        return text

    async def shout(text: str) -> str:
        return text.upper()

    class Caller:
        __name__ = "caller"

        async def __call__(self, text: str) -> str:
            return f"{text}!"

    def later(text: str) -> Awaitable[str]:
        return shout(text)

    async def broken(text: str) -> str:
        raise RuntimeError("no")

    server = Server("shapes", "1.0.0")
    server.tool(say, name="sync")
    server.tool(shout, name="async")
    server.tool(functools.partial(shout), name="partial", description="d")
    server.tool(Caller(), name="object", description="d")
    server.tool(later, name="returns_coroutine")
    server.tool(broken, name="broken")
    expected = {
        "sync": "hi",
        "async": "HI",
        "partial": "HI",
        "object": "hi!",
        "returns_coroutine": "HI",
    }
    for name, text in expected.items():
        result = answer(server, request("tools/call", {"name": name, "arguments": {"text": "hi"}}))
        assert result["result"]["content"] == [{"type": "text", "text": text}], name
        assert "isError" not in result["result"] or result["result"]["isError"] is False
    failed = answer(server, request("tools/call", {"name": "broken", "arguments": {"text": "x"}}))
    assert failed["result"]["isError"] is True
