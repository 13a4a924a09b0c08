"""``input_required(state=...)``: the handler hands the server its data for the next
round, and the server seals it once, with the round's questions beside it."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from snodo import MISSING, elicitation
from snodo.core.context import Context
from snodo.core.input_responses import question_digest
from snodo.core.result import input_required
from snodo.core.state.token import inspect
from snodo.server import Server
from tests.support.wire import answer, request

SECRET = bytes(range(32))
CAPS = {"elicitation": {"form": {}}}
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
NAME = elicitation.form("Your name?", SCHEMA)
LUCA = {"action": "accept", "content": {"name": "Luca"}}


def build() -> tuple[Server, list[Any]]:
    server = Server("handed", "1.0.0", state_secret=SECRET)
    seen: list[Any] = []

    @server.tool
    def greet(ctx: Context, times: int) -> object:
        reply = elicitation.response(ctx, "name", NAME)
        seen.append(ctx.state_data)
        if reply is MISSING:
            return input_required({"name": NAME}, state={"times": times, "round": 1})
        assert isinstance(reply, elicitation.Accepted)
        return f"{reply.content['name']} x{ctx.state_data['times']}"

    @server.tool
    def later(ctx: Context) -> object:
        if ctx.state_data is None:
            return input_required(state=["come", "back"])  # no question: only the data
        return f"back with {ctx.state_data}"

    @server.tool
    def unsealable(ctx: Context) -> object:
        return input_required({"name": NAME}, state={"when": object()})

    return server, seen


def call(name: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, **params}
    return request("tools/call", params, capabilities=CAPS)


def test_the_data_comes_back_on_the_retry_sealed_once_with_the_question() -> None:
    server, seen = build()
    first = answer(server, call("greet", {"times": 2}))["result"]
    assert first["resultType"] == "input_required"
    payload = inspect(first["requestState"])
    assert payload["data"] == {"times": 2, "round": 1}
    assert payload["asked"] == {"name": question_digest(NAME)}
    state = first["requestState"]
    retry = call("greet", {"times": 2}, inputResponses={"name": LUCA}, requestState=state)
    done = answer(server, retry)["result"]
    assert done["content"] == [{"type": "text", "text": "Luca x2"}]
    assert seen == [None, {"times": 2, "round": 1}]


def test_the_sealed_data_is_bound_to_the_arguments_of_its_round() -> None:
    server, _ = build()
    state = answer(server, call("greet", {"times": 2}))["result"]["requestState"]
    other = answer(
        server, call("greet", {"times": 3}, inputResponses={"name": LUCA}, requestState=state)
    )
    assert other["error"]["code"] == -32602


def test_data_alone_is_sealed_without_questions() -> None:
    server, _ = build()
    first = answer(server, call("later", {}))["result"]
    assert "inputRequests" not in first
    assert "asked" not in inspect(first["requestState"])
    done = answer(server, call("later", {}, requestState=first["requestState"]))["result"]
    assert done["content"] == [{"type": "text", "text": "back with ['come', 'back']"}]


def test_data_that_is_not_json_is_an_internal_error_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server, _ = build()
    with caplog.at_level(logging.ERROR, logger="snodo"):
        reply = answer(server, call("unsealable", {}))
    assert reply["error"]["code"] == -32603
    assert "input_required state cannot be sealed" in caplog.text


def test_a_state_and_a_sealed_token_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        input_required({"name": NAME}, request_state="v1.x.y.z", state={"a": 1})
    with pytest.raises(ValueError, match="needs input_requests"):
        input_required()
