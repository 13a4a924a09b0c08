"""MRTR acceptance: literal request JSON in, exact JSON out, round by round.

The server holds a fixed state secret and a fixed clock, so sealed state tokens are
deterministic and whole responses can be compared literally.
"""

from __future__ import annotations

from typing import Any

import pytest

from snodo import State, elicitation, roots, sampling
from snodo.core.context import Context
from snodo.core.result import MISSING, input_required
from snodo.server import Server
from tests.support.wire import SERVER_INFO, answer, request

SECRET = bytes(range(32))
NOW = 1_800_000_000.0

NAME = elicitation.form(
    "Your name?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)
COLOR = elicitation.form(
    "Favourite colour?",
    {
        "type": "object",
        "properties": {"color": {"type": "string", "enum": ["red", "blue"]}},
        "required": ["color"],
    },
)
SUMMARY = sampling.create_message([sampling.message("user", "Summarise the repo")], max_tokens=50)
TOOL_SAMPLING = sampling.create_message(
    [sampling.message("user", "Pick a tool")],
    max_tokens=20,
    tools=[{"name": "grep", "inputSchema": {"type": "object"}}],
)
CONTEXT_SAMPLING = sampling.create_message(
    [sampling.message("user", "Use context")], max_tokens=20, include_context="thisServer"
)
ROOTS = roots.list_roots()
LINK = elicitation.url("Sign in to continue", "https://example.com/login")

ALL_CAPS = {
    "elicitation": {"form": {}, "url": {}},
    "sampling": {"tools": {}, "context": {}},
    "roots": {},
}


def build(secret: bytes = SECRET, keys: list[tuple[str, bytes]] | None = None) -> Server:
    server = Server(
        "test-server",
        "1.0.0",
        state=State(clock=lambda: NOW, keys=keys)
        if keys
        else State(clock=lambda: NOW, secret=secret),
    )
    server.calls = 0  # type: ignore[attr-defined]

    def wizard_step(ctx: Context) -> Any:
        server.calls += 1  # type: ignore[attr-defined]
        known = dict(ctx.state_data or {})
        for key, question in (("name", NAME), ("color", COLOR)):
            reply = elicitation.response(ctx, key, question)
            if isinstance(reply, elicitation.Declined):
                return "You declined."
            if isinstance(reply, elicitation.Cancelled):
                return "You cancelled."
            if isinstance(reply, elicitation.Accepted):
                known[key] = reply.content[key]
        missing = {k: q for k, q in (("name", NAME), ("color", COLOR)) if k not in known}
        if missing:
            return input_required(missing, request_state=ctx.seal(known))
        return f"{known['name']} likes {known['color']}"

    @server.tool
    def wizard(ctx: Context, topic: str = "colours") -> Any:
        return wizard_step(ctx)

    @server.resource("test://wizard", name="wizard")
    def wizard_resource(ctx: Context) -> Any:
        return wizard_step(ctx)

    @server.prompt()
    def wizard_prompt(ctx: Context) -> Any:
        return wizard_step(ctx)

    @server.tool
    def summarise(ctx: Context) -> Any:
        result = sampling.response(ctx, "summary", SUMMARY)
        if result is MISSING:
            return input_required({"summary": SUMMARY})
        return f"Model {result.model} said something"

    @server.tool
    def workspace(ctx: Context) -> Any:
        listed = roots.response(ctx, "roots", ROOTS)
        if listed is MISSING:
            return input_required({"roots": ROOTS})
        return f"{len(listed.roots)} root(s)"

    @server.tool
    def ask(ctx: Context, kinds: list[str]) -> Any:
        table = {
            "form": NAME,
            "url": LINK,
            "sampling": SUMMARY,
            "tools": TOOL_SAMPLING,
            "context": CONTEXT_SAMPLING,
            "roots": ROOTS,
        }
        return input_required({kind: table[kind] for kind in kinds})

    @server.tool(
        output_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        }
    )
    def counted(ctx: Context) -> Any:
        if elicitation.response(ctx, "name", NAME) is MISSING:
            return input_required({"name": NAME})
        return {"n": 1}

    @server.tool(output_schema={"type": "object", "required": ["n"]})
    def miscounted(ctx: Context) -> Any:
        if elicitation.response(ctx, "name", NAME) is MISSING:
            return input_required({"name": NAME})
        return {"m": 1}

    return server


def call(
    name: str, id: int = 1, caps: dict[str, Any] | None = None, **params: Any
) -> dict[str, Any]:
    return request(
        "tools/call",
        {"name": name, **params},
        id=id,
        capabilities=ALL_CAPS if caps is None else caps,
    )


def accept(field: str, value: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {field: value}}


def test_multiple_inputs_in_one_round() -> None:
    server = build()
    response = answer(server, call("wizard", id=1))
    state = response["result"]["requestState"]
    assert response == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "resultType": "input_required",
            "inputRequests": {"name": NAME, "color": COLOR},
            "requestState": state,
            "_meta": SERVER_INFO,
        },
    }
    assert state.startswith("v1.")


def test_partial_answers_are_carried_in_state_and_only_the_rest_is_asked() -> None:
    server = build()
    first = answer(server, call("wizard", id=1))["result"]
    second = answer(
        server,
        call(
            "wizard",
            id=2,
            inputResponses={"name": accept("name", "Ada")},
            requestState=first["requestState"],
        ),
    )["result"]
    assert second["resultType"] == "input_required"
    assert second["inputRequests"] == {"color": COLOR}
    assert second["requestState"] != first["requestState"]
    third = answer(
        server,
        call(
            "wizard",
            id=3,
            inputResponses={"color": accept("color", "blue")},
            requestState=second["requestState"],
        ),
    )
    assert third == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "Ada likes blue"}],
            "_meta": SERVER_INFO,
        },
    }


def test_all_answers_in_one_retry_complete_and_extra_keys_are_ignored() -> None:
    server = build()
    responses = {
        "name": accept("name", "Bo"),
        "color": accept("color", "red"),
        "unrelated": {"action": "cancel"},
        "another": {"roots": []},
    }
    state = _first_state(server)
    result = answer(server, call("wizard", inputResponses=responses, requestState=state))
    assert result["result"]["content"] == [{"type": "text", "text": "Bo likes red"}]


def test_answers_before_any_question_are_ignored_and_the_questions_asked() -> None:
    """A client cannot answer for the user what the server never asked: answers in a
    request without state count for nothing."""
    server = build()
    responses = {"name": accept("name", "Bo"), "color": accept("color", "red")}
    result = answer(server, call("wizard", inputResponses=responses))["result"]
    assert result["resultType"] == "input_required"
    assert set(result["inputRequests"]) == {"name", "color"}


def test_missing_answers_are_asked_again() -> None:
    server = build()
    wrong = {"wrong_key": {"action": "accept", "content": {"data": "x"}}}
    result = answer(server, call("wizard", inputResponses=wrong))["result"]
    assert result["resultType"] == "input_required"
    assert set(result["inputRequests"]) == {"name", "color"}


@pytest.mark.parametrize(
    ("action", "text"), [("decline", "You declined."), ("cancel", "You cancelled.")]
)
def test_decline_and_cancel_end_the_flow(action: str, text: str) -> None:
    server = build()
    retry = call(
        "wizard", inputResponses={"name": {"action": action}}, requestState=_first_state(server)
    )
    result = answer(server, retry)["result"]
    assert result["content"] == [{"type": "text", "text": text}]


@pytest.mark.parametrize(
    ("responses", "message"),
    [
        ({"name": accept("name", 42)}, "Invalid elicitation response for 'name'"),
        ({"name": {"action": "accept", "content": {}}}, "Invalid elicitation response for 'name'"),
        ({"name": {"action": "maybe"}}, None),
        ({"name": 12345}, None),
        (None, None),
        ([], None),
    ],
)
def test_malformed_responses_are_invalid_params_without_echo(
    responses: Any, message: str | None
) -> None:
    server = build()
    state = _first_state(server)
    error = answer(server, call("wizard", id=5, inputResponses=responses, requestState=state))[
        "error"
    ]
    assert error["code"] == -32602
    if message is not None:
        assert error["message"] == message
    assert "12345" not in error["message"] and "42" not in error["message"]


def test_request_state_must_be_a_string_and_the_handler_never_runs() -> None:
    server = build()
    for bad in (123, None, {"a": 1}, ["x"]):
        error = answer(server, call("wizard", requestState=bad))["error"]
        assert error["code"] == -32602
    assert server.calls == 0  # type: ignore[attr-defined]


def _first_state(server: Server, name: str = "wizard", **params: Any) -> str:
    """The state of a first round: the retry's answers answer what it asked."""
    state: str = answer(server, call(name, **params))["result"]["requestState"]
    return state


@pytest.mark.parametrize(
    "forge",
    [
        lambda s: s + "-TAMPERED",
        lambda s: s[:-1] + ("A" if s[-1] != "A" else "B"),
        lambda s: s.replace("v1.", "v2.", 1),
        lambda s: "",
        lambda s: "v1." + "a" * 9000,
    ],
    ids=["appended", "flipped", "version", "empty", "oversized"],
)
def test_tampered_state_is_rejected_before_the_handler(forge: Any) -> None:
    server = build()
    state = _first_state(
        server, arguments={"topic": "x"}, inputResponses={"name": accept("name", "A")}
    )
    before = server.calls  # type: ignore[attr-defined]
    response = answer(
        server,
        call(
            "wizard",
            id=9,
            arguments={"topic": "x"},
            inputResponses={"color": accept("color", "red")},
            requestState=forge(state),
        ),
    )
    assert response == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32602, "message": "Invalid request state"},
    }
    assert server.calls == before  # type: ignore[attr-defined]


def test_state_is_bound_to_arguments_method_principal_and_time() -> None:
    server = build()
    state = _first_state(server, arguments={"topic": "x"})
    both = {"name": accept("name", "A"), "color": accept("color", "red")}
    retry = {"inputResponses": both, "requestState": state}
    invalid = {"code": -32602, "message": "Invalid request state"}
    assert answer(server, call("wizard", arguments={"topic": "y"}, **retry))["error"] == invalid
    assert answer(server, call("wizard", **retry))["error"] == invalid
    other_method = request(
        "resources/read", {"uri": "test://wizard", **retry}, capabilities=ALL_CAPS
    )
    assert answer(server, other_method)["error"] == invalid
    stranger = call("wizard", arguments={"topic": "x"}, **retry)
    assert answer(server, stranger, principal="mallory")["error"] == invalid
    later = build()
    later.clock = lambda: NOW + 301
    assert answer(later, call("wizard", arguments={"topic": "x"}, **retry))["error"] == invalid
    ok = answer(server, call("wizard", arguments={"topic": "x"}, **retry))["result"]
    assert ok["content"] == [{"type": "text", "text": "A likes red"}]


def test_state_sealed_for_a_principal_opens_only_for_it() -> None:
    server = build()
    first = answer(server, call("wizard"), principal="alice")["result"]
    retry = call(
        "wizard",
        inputResponses={"name": accept("name", "A"), "color": accept("color", "red")},
        requestState=first["requestState"],
    )
    assert answer(server, retry, principal="alice")["result"]["resultType"] == "complete"
    assert answer(server, retry, principal="bob")["error"]["code"] == -32602
    assert answer(server, retry)["error"]["code"] == -32602


def test_capabilities_are_checked_on_every_round() -> None:
    server = build()
    first = answer(server, call("wizard", caps={"elicitation": {}}))["result"]
    assert first["resultType"] == "input_required"
    retry = call(
        "wizard",
        caps={},
        inputResponses={"name": accept("name", "A")},
        requestState=first["requestState"],
    )
    assert answer(server, retry)["error"] == {
        "code": -32021,
        "message": "This request needs the client capabilities elicitation.form",
        "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
    }


@pytest.mark.parametrize(
    ("kinds", "caps", "required", "names"),
    [
        (["form"], {}, {"elicitation": {"form": {}}}, "elicitation.form"),
        (["form"], {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}, "elicitation.form"),
        (["url"], {"elicitation": {}}, {"elicitation": {"url": {}}}, "elicitation.url"),
        (["sampling"], {}, {"sampling": {}}, "sampling"),
        (["tools"], {"sampling": {}}, {"sampling": {"tools": {}}}, "sampling.tools"),
        (["context"], {"sampling": {}}, {"sampling": {"context": {}}}, "sampling.context"),
        (["roots"], {"sampling": {}}, {"roots": {}}, "roots"),
        (
            ["form", "tools", "roots"],
            {"elicitation": {}},
            {"roots": {}, "sampling": {"tools": {}}},
            "roots, sampling.tools",
        ),
        (
            ["url", "sampling", "roots"],
            {},
            {"elicitation": {"url": {}}, "roots": {}, "sampling": {}},
            "elicitation.url, roots, sampling",
        ),
        (
            ["form", "url", "tools", "context"],
            {},
            {"elicitation": {"form": {}, "url": {}}, "sampling": {"context": {}, "tools": {}}},
            "elicitation.form, elicitation.url, sampling.context, sampling.tools",
        ),
    ],
)
def test_missing_capability_shapes(
    kinds: list[str], caps: dict[str, Any], required: dict[str, Any], names: str
) -> None:
    server = build()
    error = answer(server, call("ask", caps=caps, arguments={"kinds": kinds}))["error"]
    assert error["code"] == -32021
    assert error["message"] == f"This request needs the client capabilities {names}"
    assert error["data"] == {"requiredCapabilities": required}


def test_declared_capabilities_admit_every_kind() -> None:
    server = build()
    kinds = ["form", "url", "sampling", "tools", "context", "roots"]
    result = answer(server, call("ask", arguments={"kinds": kinds}))["result"]
    assert sorted(result["inputRequests"]) == sorted(kinds)


def test_sampling_round_trip() -> None:
    server = build()
    first = answer(server, call("summarise", caps={"sampling": {}}))["result"]
    state = first.pop("requestState")  # the question, pinned (the handler sealed nothing)
    assert first == {
        "resultType": "input_required",
        "inputRequests": {"summary": SUMMARY},
        "_meta": SERVER_INFO,
    }
    reply = {
        "role": "assistant",
        "content": {"type": "text", "text": "It is a repo."},
        "model": "m-1",
        "stopReason": "endTurn",
    }
    done = answer(
        server,
        call(
            "summarise",
            caps={"sampling": {}},
            inputResponses={"summary": reply},
            requestState=state,
        ),
    )["result"]
    assert done["content"] == [{"type": "text", "text": "Model m-1 said something"}]
    bad = {"role": "robot", "content": {"type": "text", "text": "x"}, "model": "m"}
    error = answer(
        server,
        call(
            "summarise", caps={"sampling": {}}, inputResponses={"summary": bad}, requestState=state
        ),
    )["error"]
    assert error["code"] == -32602


def test_roots_round_trip() -> None:
    server = build()
    first = answer(server, call("workspace", caps={"roots": {}}))["result"]
    assert first["inputRequests"] == {"roots": {"method": "roots/list"}}
    state = first["requestState"]
    listed = {"roots": [{"uri": "file:///work", "name": "work"}]}
    retry = call(
        "workspace", caps={"roots": {}}, inputResponses={"roots": listed}, requestState=state
    )
    done = answer(server, retry)["result"]
    assert done["content"] == [{"type": "text", "text": "1 root(s)"}]
    remote = {"roots": [{"uri": "https://example.com/"}]}
    retry = call(
        "workspace", caps={"roots": {}}, inputResponses={"roots": remote}, requestState=state
    )
    error = answer(server, retry)["error"]
    assert error["code"] == -32602


def test_input_required_skips_output_validation_and_the_final_result_gets_it() -> None:
    server = build()
    first = answer(server, call("counted"))["result"]
    assert first["resultType"] == "input_required"
    named = {"name": accept("name", "A")}
    done = answer(server, call("counted", inputResponses=named, requestState=first["requestState"]))
    assert done["result"]["structuredContent"] == {"n": 1}
    first = answer(server, call("miscounted"))["result"]
    assert first["resultType"] == "input_required"
    wrong = answer(
        server, call("miscounted", inputResponses=named, requestState=first["requestState"])
    )
    assert wrong["error"]["code"] == -32603


def test_resource_and_prompt_flows() -> None:
    server = build()
    read = request("resources/read", {"uri": "test://wizard"}, capabilities=ALL_CAPS)
    first = answer(server, read)["result"]
    assert first["resultType"] == "input_required" and "ttlMs" not in first
    responses = {"name": accept("name", "Cy"), "color": accept("color", "red")}
    done = answer(
        server,
        request(
            "resources/read",
            {
                "uri": "test://wizard",
                "inputResponses": responses,
                "requestState": first["requestState"],
            },
            capabilities=ALL_CAPS,
        ),
    )["result"]
    assert done["contents"] == [{"uri": "test://wizard", "text": "Cy likes red"}]
    assert (done["ttlMs"], done["cacheScope"]) == (0, "private")
    get = {"name": "wizard_prompt"}
    asked = answer(server, request("prompts/get", get, capabilities=ALL_CAPS))["result"]
    retry = {**get, "inputResponses": responses, "requestState": asked["requestState"]}
    prompt = answer(server, request("prompts/get", retry, capabilities=ALL_CAPS))["result"]
    assert prompt["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Cy likes red"}}
    ]


def test_input_required_outside_the_three_methods_is_a_server_error() -> None:
    server = build()

    @server.completion("ref/prompt", "wizard_prompt")
    def sneaky(argument: str, value: str, context: dict[str, str]) -> Any:
        return input_required({"name": NAME})

    completion = request(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "wizard_prompt"},
            "argument": {"name": "x", "value": ""},
        },
        capabilities=ALL_CAPS,
    )
    assert answer(server, completion)["error"]["code"] == -32603


def test_key_rotation_across_two_nodes_rejects_nothing() -> None:
    """Three-step rotation from key a to key b, nodes updated one at a time."""
    a, b = b"a" * 32, b"b" * 32
    steps = [
        ([("a", a)], [("a", a)]),
        ([("a", a), ("b", b)], [("a", a)]),  # node 1 on step 1
        ([("a", a), ("b", b)], [("a", a), ("b", b)]),  # both on step 1
        ([("b", b), ("a", a)], [("a", a), ("b", b)]),  # node 1 on step 2
        ([("b", b), ("a", a)], [("b", b), ("a", a)]),  # both on step 2
        ([("b", b)], [("b", b), ("a", a)]),  # node 1 on step 3
        ([("b", b)], [("b", b)]),
    ]
    rejected = 0
    for one, two in steps:
        node1, node2 = build(keys=one), build(keys=two)
        for first, second in ((node1, node2), (node2, node1)):
            state = answer(first, call("wizard", inputResponses={"name": accept("name", "A")}))[
                "result"
            ]["requestState"]
            done = answer(
                second,
                call(
                    "wizard", inputResponses={"color": accept("color", "red")}, requestState=state
                ),
            )
            rejected += "error" in done
    assert rejected == 0
    old = answer(
        build(keys=[("a", a)]), call("wizard", inputResponses={"name": accept("name", "A")})
    )
    retired = answer(
        build(keys=[("b", b)]),
        call(
            "wizard",
            inputResponses={"color": accept("color", "red")},
            requestState=old["result"]["requestState"],
        ),
    )
    assert retired["error"] == {"code": -32602, "message": "Invalid request state"}


def test_handlers_can_ask_only_for_what_the_client_declared() -> None:
    server = Server("s", "1")

    @server.tool
    def polite(ctx: Context) -> Any:
        wanted = {"name": NAME, "summary": SUMMARY, "roots": ROOTS}
        asking = {key: req for key, req in wanted.items() if ctx.supports(req)}
        return input_required(asking) if asking else "nothing to ask"

    only_sampling = answer(server, call("polite", caps={"sampling": {}}))["result"]
    assert list(only_sampling["inputRequests"]) == ["summary"]
    nothing = answer(server, call("polite", caps={}))["result"]
    assert nothing["content"] == [{"type": "text", "text": "nothing to ask"}]


def test_sampled_text_helper_and_bare_prompt_decorator() -> None:
    result = sampling.CreateMessageResult.model_validate(
        {
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
    )
    assert sampling.text(result) == "ab"
    server = Server("s", "1")

    @server.prompt
    def hello() -> str:
        return "hi"

    assert list(server.registry.prompts) == ["hello"]
