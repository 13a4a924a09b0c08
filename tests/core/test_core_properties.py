"""Whatever arrives, the core answers with one valid JSON-RPC message (or nothing for a
notification) and never raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.server import Server
from tests.core.wire import call, meta

SERVER = Server("prop", "1")


@SERVER.tool
def echo(text: str) -> str:
    return text


scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
methods = st.sampled_from(
    [
        "tools/call",
        "tools/list",
        "server/discover",
        "resources/read",
        "prompts/get",
        "initialize",
        "x",
    ]
)


def envelopes() -> st.SearchStrategy[dict[str, Any]]:
    params = st.fixed_dictionaries(
        {},
        optional={
            "_meta": st.one_of(json_values, st.just(meta()), st.just(meta({"elicitation": {}}))),
            "name": st.one_of(st.just("echo"), json_values),
            "arguments": st.one_of(st.just({"text": "hi"}), json_values),
            "inputResponses": json_values,
            "requestState": json_values,
            "uri": json_values,
        },
    )
    return st.fixed_dictionaries(
        {
            "jsonrpc": st.one_of(st.just("2.0"), json_values),
            "method": st.one_of(methods, json_values),
        },
        optional={
            "id": st.one_of(st.integers(), st.text(max_size=4), json_values),
            "params": params,
        },
    )


def _check(message: Any) -> None:
    reply = call(SERVER, message)
    if reply.response is None:
        assert isinstance(message, dict) and "id" not in message
        return
    response = reply.response
    assert response["jsonrpc"] == "2.0"
    assert ("result" in response) != ("error" in response)
    if "error" in response:
        assert isinstance(response["error"]["code"], int)
        assert "Traceback" not in response["error"]["message"]


@settings(max_examples=300, deadline=None)
@given(envelopes())
def test_arbitrary_envelopes(message: dict[str, Any]) -> None:
    _check(message)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_arbitrary_json_values(value: Any) -> None:
    _check(value)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_arbitrary_bytes(data: bytes) -> None:
    reply = call(SERVER, data)
    if reply.response is not None:
        json.dumps(reply.response)
