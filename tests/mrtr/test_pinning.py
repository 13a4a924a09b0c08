"""Answers count only to questions the flow asked: the server pins each question it
asks into the sealed state (a digest by key) and the input modules read nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from snodo import MISSING, elicitation, roots, sampling
from snodo.core.context import Context
from snodo.core.input_responses import question_digest
from snodo.core.result import input_required
from snodo.core.state.token import inspect
from snodo.server import Server
from tests.support.wire import answer, request

SECRET = bytes(range(32))
CAPS = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
YES = {"action": "accept", "content": {"confirm": True}}


def confirm(message: str = "Delete it?") -> dict[str, Any]:
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
    return elicitation.form(message, schema)


def build(message: str = "Delete it?") -> tuple[Server, list[str]]:
    server = Server("pins", "1.0.0", state_secret=SECRET)
    deleted: list[str] = []

    @server.tool
    def delete(ctx: Context, name: str) -> object:
        reply = elicitation.response(ctx, "confirm", confirm(message))
        if reply is MISSING:
            return input_required({"confirm": confirm(message)})
        if isinstance(reply, elicitation.Accepted) and reply.content.get("confirm"):
            deleted.append(name)
            return "deleted"
        return "kept"

    return server, deleted


def call(name: str = "delete", **params: Any) -> dict[str, Any]:
    return request(
        "tools/call", {"name": name, "arguments": {"name": "n"}, **params}, capabilities=CAPS
    )


def result(server: Server, message: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = answer(server, message)["result"]
    return out


def test_a_confirmation_sent_before_the_question_deletes_nothing() -> None:
    server, deleted = build()
    first = result(server, call(inputResponses={"confirm": YES}))
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["confirm"]
    assert deleted == []
    done = result(server, call(inputResponses={"confirm": YES}, requestState=first["requestState"]))
    assert done["content"] == [{"type": "text", "text": "deleted"}]
    assert deleted == ["n"]


def test_the_state_carries_a_digest_of_each_question_and_nothing_else_of_it() -> None:
    server, _ = build()
    state = result(server, call())["requestState"]
    payload = inspect(state)
    assert payload["asked"] == {"confirm": question_digest(confirm())}
    assert payload["data"] is None  # the handler sealed nothing; the server did
    assert len(payload["asked"]["confirm"]) == 22


def test_an_answer_to_a_question_that_changed_is_not_read() -> None:
    """A state from a worker that asked another question under the same key (a new
    deploy, say) does not make its answer count for this one."""
    old, _ = build("Delete it?")
    new, deleted = build("Delete it for ever?")
    state = result(old, call())["requestState"]
    again = result(new, call(inputResponses={"confirm": YES}, requestState=state))
    assert again["resultType"] == "input_required"
    assert deleted == []


def test_a_key_the_flow_never_asked_is_not_read_even_with_a_state() -> None:
    server = Server("pins", "1.0.0", state_secret=SECRET)
    seen: list[object] = []

    @server.tool
    def two(ctx: Context) -> object:
        first = elicitation.response(ctx, "first", confirm("First?"))
        second = elicitation.response(ctx, "second", confirm("Second?"))
        seen.append((first is MISSING, second is MISSING))
        if first is MISSING:
            return input_required({"first": confirm("First?")})
        return "done" if second is MISSING else "second was read"

    state = result(server, request("tools/call", {"name": "two"}, capabilities=CAPS))[
        "requestState"
    ]
    both = {"first": YES, "second": YES}
    done = result(
        server,
        request(
            "tools/call",
            {"name": "two", "inputResponses": both, "requestState": state},
            capabilities=CAPS,
        ),
    )
    assert done["content"] == [{"type": "text", "text": "done"}]
    assert seen[-1] == (False, True)


def test_questions_accumulate_over_the_rounds_of_a_flow() -> None:
    server = Server("pins", "1.0.0", state_secret=SECRET)
    read: list[tuple[bool, bool]] = []

    @server.tool
    def steps(ctx: Context) -> object:
        a = elicitation.response(ctx, "a", confirm("A?"))
        b = elicitation.response(ctx, "b", confirm("B?"))
        read.append((a is not MISSING, b is not MISSING))
        if ctx.state_data is None:
            return input_required({"a": confirm("A?")}, request_state=ctx.seal({"round": 1}))
        if b is MISSING:
            return input_required({"b": confirm("B?")}, request_state=ctx.seal({"round": 2}))
        return "both"

    first = result(server, request("tools/call", {"name": "steps"}, capabilities=CAPS))
    second = result(
        server,
        request(
            "tools/call",
            {"name": "steps", "inputResponses": {"a": YES}, "requestState": first["requestState"]},
            capabilities=CAPS,
        ),
    )
    assert set(inspect(second["requestState"])["asked"]) == {"a", "b"}
    assert inspect(second["requestState"])["data"] == {"round": 2}
    third = result(
        server,
        request(
            "tools/call",
            {
                "name": "steps",
                "inputResponses": {"a": YES, "b": YES},
                "requestState": second["requestState"],
            },
            capabilities=CAPS,
        ),
    )
    assert third["content"] == [{"type": "text", "text": "both"}]
    assert read == [(False, False), (True, False), (True, True)]


@pytest.mark.parametrize("kind", ["sampling", "roots"])
def test_sampling_and_roots_answers_are_pinned_too(kind: str) -> None:
    server = Server("pins", "1.0.0", state_secret=SECRET)
    question = (
        sampling.create_message([sampling.message("user", "Hi")], max_tokens=5)
        if kind == "sampling"
        else roots.list_roots()
    )
    reader = sampling.response if kind == "sampling" else roots.response
    reply = (
        {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"}
        if kind == "sampling"
        else {"roots": [{"uri": "file:///work"}]}
    )

    @server.tool
    def ask(ctx: Context) -> object:
        got = reader(ctx, "q", question)
        return input_required({"q": question}) if got is MISSING else "answered"

    unasked = result(
        server,
        request("tools/call", {"name": "ask", "inputResponses": {"q": reply}}, capabilities=CAPS),
    )
    assert unasked["resultType"] == "input_required"
    retry = {"name": "ask", "inputResponses": {"q": reply}, "requestState": unasked["requestState"]}
    done = result(server, request("tools/call", retry, capabilities=CAPS))
    assert done["content"] == [{"type": "text", "text": "answered"}]


def test_a_handler_may_echo_the_state_it_was_given_and_keep_asking() -> None:
    server = Server("pins", "1.0.0", state_secret=SECRET)

    @server.tool
    def stubborn(ctx: Context) -> object:
        if ctx.request_state is None:
            return input_required({"x": confirm("X?")}, request_state=ctx.seal("kept"))
        reply = elicitation.response(ctx, "x", confirm("X?"))
        if reply is MISSING:
            return input_required({"x": confirm("X?")}, request_state=ctx.request_state)
        return f"{ctx.state_data}: read"

    first = result(server, request("tools/call", {"name": "stubborn"}, capabilities=CAPS))
    echoed = result(
        server,
        request(
            "tools/call",
            {"name": "stubborn", "requestState": first["requestState"]},
            capabilities=CAPS,
        ),
    )
    assert inspect(echoed["requestState"])["data"] == "kept"
    retry = {
        "name": "stubborn",
        "inputResponses": {"x": YES},
        "requestState": echoed["requestState"],
    }
    done = result(server, request("tools/call", retry, capabilities=CAPS))
    assert done["content"] == [{"type": "text", "text": "kept: read"}]


def test_a_state_the_server_did_not_seal_is_the_servers_fault() -> None:
    server = Server("pins", "1.0.0", state_secret=SECRET)
    other = Server("other", "1.0.0", state_secret=bytes(32))

    @server.tool
    def foreign(ctx: Context) -> object:
        token = other.keyring.seal({"x": 1}, ctx)
        return input_required({"x": confirm("X?")}, request_state=token)

    error = answer(server, request("tools/call", {"name": "foreign"}, capabilities=CAPS))["error"]
    assert error == {"code": -32603, "message": "Internal error"}


def test_a_context_built_by_hand_reads_answers_as_they_come() -> None:
    """Unit tests of a handler build their own Context: nothing was pinned there."""
    ctx = Context(1, "tools/call", {}, "2026-07-28", {}, input_responses={"confirm": YES})
    assert isinstance(elicitation.response(ctx, "confirm", confirm()), elicitation.Accepted)
    pinned_nothing = Context(
        1, "tools/call", {}, "2026-07-28", {}, input_responses={"confirm": YES}, asked={}
    )
    assert elicitation.response(pinned_nothing, "confirm", confirm()) is MISSING


def test_the_digest_is_stable_and_follows_every_part_of_the_question() -> None:
    assert question_digest(confirm()) == question_digest(confirm())
    assert question_digest(confirm()) == question_digest(dict(confirm()))
    assert question_digest(confirm()) != question_digest(confirm("Delete it!"))
    reordered = {"params": dict(confirm())["params"], "method": "elicitation/create"}
    assert question_digest(reordered) == question_digest(confirm())
    assert question_digest({"method": "x", "params": {"v": object()}}) == ""
