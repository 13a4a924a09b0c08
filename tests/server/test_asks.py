"""``Annotated[T, Ask(request)]``: every unanswered question in one round, the handler
once on the retry that answers the last, earlier answers carried in the sealed state,
each pinned to its question, declines visible as None or as the response, hidden from
the schema, and refused at registration when the annotation cannot take an answer."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest

from snodo import (
    Ask,
    Client,
    Context,
    Depends,
    Server,
    elicitation,
    input_required,
    roots,
    sampling,
)
from snodo.asking.roots import Root
from snodo.client.transports import MemoryTransport
from snodo_wire.models import CreateMessageResult
from tests.support.wire import answer, request

CITY = elicitation.form(
    "Which city?",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city"],
    },
)
SUMMARY = sampling.create_message([sampling.message("user", "Say hello")], max_tokens=20)
ROOTS = roots.list_roots()
ALL = {"elicitation": {}, "sampling": {}, "roots": {}}

CITY_ANSWER = {"action": "accept", "content": {"city": "Oslo"}}
SUMMARY_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "hello"},
    "model": "m",
}
ROOTS_ANSWER = {"roots": [{"uri": "file:///work", "name": "work"}]}


def build(calls: list[Any]) -> Server:
    server = Server("asks", "1")

    @server.tool
    def trip(
        days: int,
        city: Annotated[str | None, Ask(CITY, pick="city")],
        summary: Annotated[str, Ask(SUMMARY)],
        folders: Annotated[list[Root], Ask(ROOTS, key="where")],
    ) -> str:
        calls.append((days, city, summary, folders))
        if city is None:
            return "no city"
        return f"{days} {city} {summary} {[r.uri for r in folders]}"

    return server


def call(server: Server, params: dict[str, Any], id: int = 1, caps: Any = None) -> Any:
    body = request("tools/call", params, id=id, capabilities=ALL if caps is None else caps)
    return answer(server, body)


def test_every_question_is_asked_in_one_round_and_the_handler_runs_once() -> None:
    calls: list[Any] = []
    server = build(calls)
    first = call(server, {"name": "trip", "arguments": {"days": 2}})["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"city": CITY, "summary": SUMMARY, "where": ROOTS}
    assert calls == []
    retry = {
        "name": "trip",
        "arguments": {"days": 2},
        "inputResponses": {"city": CITY_ANSWER, "summary": SUMMARY_ANSWER, "where": ROOTS_ANSWER},
        "requestState": first["requestState"],
    }
    done = call(server, retry, id=2)["result"]
    assert done["content"] == [{"type": "text", "text": "2 Oslo hello ['file:///work']"}]
    assert len(calls) == 1
    assert isinstance(calls[0][3][0], Root)


def test_the_asked_parameters_are_not_in_the_input_schema() -> None:
    server = build([])
    listed = answer(server, request("tools/list", {}, id=1))["result"]["tools"][0]
    assert listed["inputSchema"]["properties"] == {"days": {"type": "integer"}}
    assert listed["inputSchema"]["required"] == ["days"]


def test_answers_given_in_an_earlier_round_are_carried_and_only_the_rest_asked() -> None:
    calls: list[Any] = []
    server = build(calls)
    first = call(server, {"name": "trip", "arguments": {"days": 1}})["result"]
    partial = {
        "name": "trip",
        "arguments": {"days": 1},
        "inputResponses": {"city": CITY_ANSWER},
        "requestState": first["requestState"],
    }
    second = call(server, partial, id=2)["result"]
    assert second["resultType"] == "input_required"
    assert second["inputRequests"] == {"summary": SUMMARY, "where": ROOTS}
    rest = {
        "name": "trip",
        "arguments": {"days": 1},
        "inputResponses": {"summary": SUMMARY_ANSWER, "where": ROOTS_ANSWER},
        "requestState": second["requestState"],
    }
    done = call(server, rest, id=3)["result"]
    assert done["content"][0]["text"] == "1 Oslo hello ['file:///work']"
    assert len(calls) == 1


def test_an_answer_the_server_did_not_ask_for_counts_for_nothing() -> None:
    calls: list[Any] = []
    server = build(calls)
    pre_answered = {
        "name": "trip",
        "arguments": {"days": 1},
        "inputResponses": {"city": CITY_ANSWER, "summary": SUMMARY_ANSWER, "where": ROOTS_ANSWER},
    }
    result = call(server, pre_answered)["result"]
    assert result["resultType"] == "input_required"
    assert set(result["inputRequests"]) == {"city", "summary", "where"}
    assert calls == []


def test_a_forged_state_is_refused_before_anything_runs() -> None:
    calls: list[Any] = []
    server = build(calls)
    first = call(server, {"name": "trip", "arguments": {"days": 1}})["result"]
    state = first["requestState"]
    forged = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
    retry = {
        "name": "trip",
        "arguments": {"days": 1},
        "inputResponses": {"city": CITY_ANSWER, "summary": SUMMARY_ANSWER, "where": ROOTS_ANSWER},
        "requestState": forged,
    }
    assert call(server, retry, id=2)["error"]["code"] == -32602
    assert calls == []


def test_a_malformed_answer_is_invalid_params_naming_only_the_key() -> None:
    server = build([])
    first = call(server, {"name": "trip", "arguments": {"days": 1}})["result"]
    retry = {
        "name": "trip",
        "arguments": {"days": 1},
        "inputResponses": {
            "city": {"action": "accept", "content": {"city": 7}},
            "summary": SUMMARY_ANSWER,
            "where": ROOTS_ANSWER,
        },
        "requestState": first["requestState"],
    }
    error = call(server, retry, id=2)["error"]
    assert error == {"code": -32602, "message": "Invalid elicitation response for 'city'"}


def test_a_declined_form_reaches_the_handler_as_none() -> None:
    calls: list[Any] = []
    server = build(calls)
    first = call(server, {"name": "trip", "arguments": {"days": 1}})["result"]
    retry = {
        "name": "trip",
        "arguments": {"days": 1},
        "inputResponses": {
            "city": {"action": "decline"},
            "summary": SUMMARY_ANSWER,
            "where": ROOTS_ANSWER,
        },
        "requestState": first["requestState"],
    }
    assert call(server, retry, id=2)["result"]["content"][0]["text"] == "no city"
    assert calls[0][1] is None


QUESTION = {"text": "Which city?"}


def current(arguments: Any) -> Any:
    return elicitation.form(
        QUESTION["text"],
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )


def confirm(arguments: Any) -> Any:
    return elicitation.form(
        f"Delete {arguments['name']}?",
        {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
    )


CONSENT = elicitation.url("Open the notice", "https://example.com/notice")
OPENED: list[str] = []


def db() -> str:
    OPENED.append("db")
    return "db"


def test_a_question_that_changed_since_it_was_asked_is_asked_again() -> None:
    server = Server("changing", "1")
    calls: list[str | None] = []

    @server.tool
    def where(city: Annotated[str | None, Ask(current, pick="city")]) -> str:
        calls.append(city)
        return f"in {city}"

    first = call(server, {"name": "where", "arguments": {}})["result"]
    QUESTION["text"] = "Which town?"  # a new deploy asks another question
    try:
        retry = {
            "name": "where",
            "arguments": {},
            "inputResponses": {"city": CITY_ANSWER},
            "requestState": first["requestState"],
        }
        again = call(server, retry, id=2)["result"]
    finally:
        QUESTION["text"] = "Which city?"
    assert again["resultType"] == "input_required"
    assert again["inputRequests"]["city"]["params"]["message"] == "Which town?"
    assert calls == []


def test_a_question_built_from_the_arguments_is_the_one_pinned() -> None:
    server = Server("confirm", "1")

    @server.tool
    def delete(name: str, ok: Annotated[bool | None, Ask(confirm, pick="ok")]) -> str:
        return f"deleted {name}" if ok else f"kept {name}"

    first = call(server, {"name": "delete", "arguments": {"name": "plans"}})["result"]
    assert first["inputRequests"]["ok"]["params"]["message"] == "Delete plans?"
    retry = {
        "name": "delete",
        "arguments": {"name": "plans"},
        "inputResponses": {"ok": {"action": "accept", "content": {"ok": True}}},
        "requestState": first["requestState"],
    }
    assert call(server, retry, id=2)["result"]["content"][0]["text"] == "deleted plans"


def test_the_whole_response_when_the_annotation_asks_for_it() -> None:
    server = Server("whole", "1")
    seen: list[Any] = []

    @server.tool
    async def notice(
        opened: Annotated[elicitation.ElicitationResponse, Ask(CONSENT)],
        sample: Annotated[CreateMessageResult, Ask(SUMMARY)],
        everything: Annotated[dict[str, Any] | None, Ask(CITY)],
    ) -> str:
        seen.extend([opened, sample, everything])
        return "ok"

    caps = {"elicitation": {"form": {}, "url": {}}, "sampling": {}}
    first = call(server, {"name": "notice", "arguments": {}}, caps=caps)["result"]
    retry = {
        "name": "notice",
        "arguments": {},
        "inputResponses": {
            "opened": {"action": "cancel"},
            "sample": SUMMARY_ANSWER,
            "everything": {"action": "accept", "content": {"city": "Oslo", "country": "NO"}},
        },
        "requestState": first["requestState"],
    }
    assert call(server, retry, id=2, caps=caps)["result"]["content"][0]["text"] == "ok"
    assert isinstance(seen[0], elicitation.Cancelled)
    assert isinstance(seen[1], CreateMessageResult) and sampling.text(seen[1]) == "hello"
    assert seen[2] == {"city": "Oslo", "country": "NO"}


def test_a_client_without_a_needed_capability_is_refused_for_all_at_once() -> None:
    calls: list[Any] = []
    server = build(calls)
    refused = call(server, {"name": "trip", "arguments": {"days": 1}}, caps={"elicitation": {}})
    assert refused["error"]["code"] == -32021
    assert calls == []


def test_dependencies_do_not_run_until_every_question_is_answered() -> None:
    server = Server("deps-asks", "1")
    OPENED.clear()

    @server.tool
    def save(
        handle: Annotated[str, Depends(db)], city: Annotated[str | None, Ask(CITY, pick="city")]
    ) -> str:
        return f"{handle} {city}"

    first = call(server, {"name": "save", "arguments": {}})["result"]
    assert first["resultType"] == "input_required" and OPENED == []
    retry = {
        "name": "save",
        "arguments": {},
        "inputResponses": {"city": CITY_ANSWER},
        "requestState": first["requestState"],
    }
    assert call(server, retry, id=2)["result"]["content"][0]["text"] == "db Oslo"
    assert OPENED == ["db"]


def test_a_handler_that_asks_more_itself_keeps_the_asked_answers_and_its_own_state() -> None:
    server = Server("mixed", "1")
    confirm = elicitation.form(
        "Sure?", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    )
    calls: list[Any] = []

    @server.tool
    def book(ctx: Context, city: Annotated[str | None, Ask(CITY, pick="city")]) -> Any:
        calls.append((city, ctx.state_data))
        sure = elicitation.response(ctx, "ok", confirm)
        if isinstance(sure, elicitation.Accepted):
            return f"booked {city} ({ctx.state_data['note']})"
        return input_required({"ok": confirm}, request_state=ctx.seal({"note": "mine"}))

    first = call(server, {"name": "book", "arguments": {}})["result"]
    assert set(first["inputRequests"]) == {"city"}
    second = call(
        server,
        {
            "name": "book",
            "arguments": {},
            "inputResponses": {"city": CITY_ANSWER},
            "requestState": first["requestState"],
        },
        id=2,
    )["result"]
    assert set(second["inputRequests"]) == {"ok"}
    done = call(
        server,
        {
            "name": "book",
            "arguments": {},
            "inputResponses": {"ok": {"action": "accept", "content": {"ok": True}}},
            "requestState": second["requestState"],
        },
        id=3,
    )["result"]
    assert done["content"][0]["text"] == "booked Oslo (mine)"
    assert calls == [("Oslo", None), ("Oslo", {"note": "mine"})]


def test_snodos_client_answers_all_three_in_one_round() -> None:
    """In memory; both eras over real processes: tests/interop/test_declarative_asks.py."""
    calls: list[Any] = []
    server = build(calls)
    asked: list[str] = []

    async def form(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("form")
        return CITY_ANSWER

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("sample")
        return SUMMARY_ANSWER

    async def where(params: dict[str, Any]) -> dict[str, Any]:
        asked.append("roots")
        return ROOTS_ANSWER

    async def scenario() -> str:
        client = Client(MemoryTransport(server), elicitation=form, sampling=sample, roots=where)
        async with client:
            result = await client.call_tool("trip", {"days": 3})
            return str(result.content[0].text)

    assert asyncio.run(scenario()) == "3 Oslo hello ['file:///work']"
    assert sorted(asked) == ["form", "roots", "sample"]
    assert len(calls) == 1


def test_registration_refuses_what_cannot_take_an_answer() -> None:
    server = Server("bad", "1")
    with pytest.raises(TypeError, match="'city': the user may decline"):

        @server.tool
        def plain(city: Annotated[str, Ask(CITY, pick="city")]) -> str:
            return city

    with pytest.raises(TypeError, match="'country': the user may decline"):

        @server.tool
        def optional_field(country: Annotated[str, Ask(CITY, pick="country")]) -> str:
            return country

    with pytest.raises(ValueError, match="the form has no field 'town'"):

        @server.tool
        def unknown(town: Annotated[str | None, Ask(CITY, pick="town")]) -> str:
            return str(town)

    with pytest.raises(ValueError, match="pick names a field of a form"):

        @server.tool
        def picky(text: Annotated[str, Ask(SUMMARY, pick="text")]) -> str:
            return text

    with pytest.raises(ValueError, match="not an input request"):

        @server.tool
        def odd(x: Annotated[str | None, Ask({"method": "tools/list"})]) -> str:
            return str(x)

    with pytest.raises(ValueError, match="two asked parameters use the input request key 'k'"):

        @server.tool
        def twice(
            a: Annotated[str, Ask(SUMMARY, key="k")], b: Annotated[str, Ask(SUMMARY, key="k")]
        ) -> str:
            return a + b

    with pytest.raises(TypeError, match="may decline"):

        @server.tool
        def built(a: Annotated[str, Ask(lambda arguments: SUMMARY)]) -> str:
            return a

    with pytest.raises(TypeError, match="Ask takes an input request"):
        Ask(42)  # type: ignore[arg-type]


def test_a_prompt_and_a_resource_template_ask_the_same_way() -> None:
    server = Server("both", "1")

    @server.prompt
    def trip_prompt(days: str, city: Annotated[str | None, Ask(CITY, pick="city")]) -> str:
        return f"Plan {days} days in {city}."

    @server.resource_template("notes://{topic}")
    def note(topic: str, city: Annotated[str | None, Ask(CITY, pick="city")]) -> str:
        return f"{topic} in {city}"

    listed = answer(server, request("prompts/list", {}, id=1))["result"]["prompts"][0]
    assert [a["name"] for a in listed["arguments"]] == ["days"]
    caps = {"elicitation": {}}
    for method, params, read in [
        (
            "prompts/get",
            {"name": "trip_prompt", "arguments": {"days": "3"}},
            lambda r: r["messages"][0]["content"]["text"],
        ),
        ("resources/read", {"uri": "notes://food"}, lambda r: r["contents"][0]["text"]),
    ]:
        first = answer(server, request(method, params, id=2, capabilities=caps))["result"]
        assert first["inputRequests"] == {"city": CITY}
        retry = {**params, "inputResponses": {"city": CITY_ANSWER}}
        retry["requestState"] = first["requestState"]
        done = answer(server, request(method, retry, id=3, capabilities=caps))["result"]
        assert read(done) in ("Plan 3 days in Oslo.", "food in Oslo")
