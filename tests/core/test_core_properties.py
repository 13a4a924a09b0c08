"""Whatever arrives, the core answers with one valid JSON-RPC message (or nothing for a
notification) and never raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from snodo.server import Server
from tests.support.strategies import json_values, scalars
from tests.support.wire import call, meta

SERVER = Server("prop", "1")


@SERVER.tool
def echo(text: str) -> str:
    return text


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


answers = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "action": st.sampled_from(["accept", "decline", "cancel", "other"]),
            "content": st.one_of(json_values, st.dictionaries(st.text(max_size=3), scalars)),
            "roots": st.lists(st.fixed_dictionaries({"uri": st.text(max_size=8)}), max_size=2),
            "role": st.sampled_from(["user", "assistant", "robot"]),
            "model": st.text(max_size=4),
        },
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=4), answers, max_size=3))
def test_fast_answer_check_decides_as_the_generated_union(responses: dict[str, Any]) -> None:
    from pydantic import ValidationError

    from snodo.core.errors import InvalidParams
    from snodo.core.input_responses import check_responses
    from snodo_wire import adapters

    try:
        adapters.input_responses.validate_python(responses)
        union_accepts = True
    except ValidationError:
        union_accepts = False
    try:
        check_responses(responses)
        fast_accepts = True
    except InvalidParams:
        fast_accepts = False
    assert fast_accepts == union_accepts
