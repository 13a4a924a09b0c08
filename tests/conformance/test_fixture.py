"""The conformance fixture, in process: what the runner relies on, without the runner.

These are the fast checks behind scripts/conformance: names and order the scenarios
look up, and the multi round-trip flows driven the way the runner drives them (same
client capabilities, same mock answers). Every message the server sends is validated
against the pinned schema by tests.support.wire.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.conformance.fixture import JSON_SCHEMA_2020_12, server
from tests.support.wire import answer, call, request

# What the runner declares on every MRTR request, and the answers its mock client gives.
CAPABILITIES = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "Paris"},
    "model": "test-model",
    "stopReason": "endTurn",
}
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def tool_call(
    name: str,
    *,
    arguments: dict[str, Any] | None = None,
    responses: Any = None,
    state: str | None = None,
    capabilities: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    if responses is not None:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    chosen = CAPABILITIES if capabilities is None else capabilities
    return request("tools/call", params, capabilities=chosen, **(meta or {}))


def result_of(message: dict[str, Any]) -> dict[str, Any]:
    response = answer(server, message)
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


def error_of(message: dict[str, Any]) -> dict[str, Any]:
    response = answer(server, message)
    assert "error" in response, response
    error: dict[str, Any] = response["error"]
    return error


def text_of(result: dict[str, Any]) -> str:
    assert result["resultType"] == "complete", result
    return str(result["content"][0]["text"])


# --- listings ------------------------------------------------------------------------


def test_tools_list_starts_with_a_tool_that_works_without_arguments() -> None:
    tools = result_of(request("tools/list"))["tools"]
    assert tools[0]["name"] == "test_simple_text"
    assert all(tool.get("description") for tool in tools)
    call_without_arguments = request("tools/call", {"name": tools[0]["name"]})
    assert text_of(result_of(call_without_arguments)) == (
        "This is a simple text response for testing."
    )


def test_tools_list_is_stable_and_carries_caching_hints() -> None:
    first = result_of(request("tools/list"))
    second = result_of(request("tools/list"))
    assert [t["name"] for t in first["tools"]] == [t["name"] for t in second["tools"]]
    assert (first["ttlMs"], first["cacheScope"]) == (300_000, "public")


def test_json_schema_2020_12_tool_keeps_its_schema_verbatim() -> None:
    tools = {t["name"]: t for t in result_of(request("tools/list"))["tools"]}
    listed = tools["json_schema_2020_12_tool"]["inputSchema"]
    assert json.dumps(listed, sort_keys=True) == json.dumps(JSON_SCHEMA_2020_12, sort_keys=True)


def test_exactly_one_tool_has_a_string_header_parameter() -> None:
    tools = result_of(request("tools/list"))["tools"]
    with_headers = [
        t["name"]
        for t in tools
        if any("x-mcp-header" in p for p in t["inputSchema"].get("properties", {}).values())
    ]
    assert with_headers == ["test_header_param"]


def test_resources_templates_and_not_found() -> None:
    listed = result_of(request("resources/list"))["resources"]
    assert listed[0]["uri"] == "test://static-text"
    read = result_of(request("resources/read", {"uri": "test://template/123/data"}))
    assert json.loads(read["contents"][0]["text"])["id"] == "123"
    unknown = "test://nonexistent-resource-for-conformance-testing"
    error = error_of(request("resources/read", {"uri": unknown}))
    assert (error["code"], error["data"]) == (-32602, {"uri": unknown})


# --- notifications -------------------------------------------------------------------


def test_progress_is_reported_three_times_before_the_result() -> None:
    reply = call(
        server, tool_call("test_tool_with_progress", meta={"progressToken": "progress-test-1"})
    )
    assert [n["params"]["progress"] for n in reply.notifications] == [0, 50, 100]
    assert reply.response is not None
    assert text_of(reply.response["result"]) == "progress-test-1"


def test_logging_only_when_the_request_sets_a_level() -> None:
    assert call(server, tool_call("test_logging_tool")).notifications == []
    asked = call(server, tool_call("test_logging_tool", meta={LOG_LEVEL: "info"}))
    assert [n["method"] for n in asked.notifications] == ["notifications/message"]


def test_trigger_tool_notifies_tool_list_subscribers() -> None:
    async def scenario() -> list[dict[str, Any]]:
        notes: list[dict[str, Any]] = []
        listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        reply = await server.handle(listen, emit=notes.append)
        assert reply.subscription is not None
        try:
            await server.handle(tool_call("test_trigger_tool_change"))
        finally:
            server.subscriptions.close(reply.subscription)
        return notes

    methods = [note["method"] for note in asyncio.run(scenario())]
    assert methods == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]


# --- multi round-trip requests -------------------------------------------------------


def test_elicitation_round_trip() -> None:
    first = result_of(tool_call("test_input_required_result_elicitation", arguments={}))
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_name"]["method"] == "elicitation/create"
    retry = tool_call(
        "test_input_required_result_elicitation",
        arguments={},
        responses={"user_name": accept(name="Alice")},
        state=first["requestState"],
    )
    assert text_of(result_of(retry)) == "Hello, Alice!"


def test_a_missing_answer_is_asked_for_again_and_extra_answers_are_ignored() -> None:
    name = "test_input_required_result_elicitation"
    wrong_key = tool_call(name, responses={"wrong_key": accept(data="wrong")})
    assert result_of(wrong_key)["resultType"] == "input_required"
    first = result_of(tool_call(name))
    extra = tool_call(
        name,
        responses={"user_name": accept(name="Alice"), "unknown_extra_key": accept(x=1)},
        state=first["requestState"],
    )
    assert text_of(result_of(extra)) == "Hello, Alice!"


def test_an_answer_the_server_did_not_ask_for_is_ignored() -> None:
    """An answer sent with the first request, before any question, counts for nothing:
    the question is asked."""
    name = "test_input_required_result_elicitation"
    unasked = result_of(tool_call(name, responses={"user_name": accept(name="Mallory")}))
    assert unasked["resultType"] == "input_required"
    assert list(unasked["inputRequests"]) == ["user_name"]


def test_a_malformed_answer_is_invalid_params() -> None:
    bad = tool_call("test_input_required_result_elicitation", responses={"user_name": 12345})
    assert error_of(bad)["code"] == -32602


def test_multi_round_flow_with_a_new_state_each_round() -> None:
    name = "test_input_required_result_multi_round"
    first = result_of(tool_call(name, arguments={}))
    assert list(first["inputRequests"]) == ["step1"]
    second = result_of(
        tool_call(
            name,
            arguments={},
            responses={"step1": accept(name="Alice")},
            state=first["requestState"],
        )
    )
    assert second["resultType"] == "input_required"
    assert list(second["inputRequests"]) == ["step2"]
    assert second["requestState"] != first["requestState"]
    third = tool_call(
        name, arguments={}, responses={"step2": accept(color="blue")}, state=second["requestState"]
    )
    assert text_of(result_of(third)) == "Alice's favourite colour is blue."


def test_multiple_inputs_in_one_round() -> None:
    name = "test_input_required_result_multiple_inputs"
    first = result_of(tool_call(name, arguments={}))
    methods = {r["method"] for r in first["inputRequests"].values()}
    assert methods == {"elicitation/create", "sampling/createMessage", "roots/list"}
    responses = {"user_name": accept(name="Alice"), "greeting": SAMPLED, "client_roots": ROOTS}
    retry = tool_call(name, arguments={}, responses=responses, state=first["requestState"])
    assert text_of(result_of(retry)) == "Paris (Alice, 1 root(s))"


def test_request_state_round_trip() -> None:
    name = "test_input_required_result_request_state"
    first = result_of(tool_call(name, arguments={}))
    retry = tool_call(
        name, arguments={}, responses={"confirm": accept(ok=True)}, state=first["requestState"]
    )
    assert "state-ok" in text_of(result_of(retry))


def test_tampered_state_is_invalid_params() -> None:
    name = "test_input_required_result_tampered_state"
    first = result_of(tool_call(name, arguments={}))
    retry = tool_call(
        name,
        arguments={},
        responses={"confirm": accept(ok=True)},
        state=first["requestState"] + "-TAMPERED",
    )
    assert error_of(retry)["code"] == -32602


def test_state_from_one_tool_does_not_open_in_another() -> None:
    issued = result_of(tool_call("test_input_required_result_request_state", arguments={}))
    replayed = tool_call(
        "test_input_required_result_tampered_state",
        arguments={},
        responses={"confirm": accept(ok=True)},
        state=issued["requestState"],
    )
    assert error_of(replayed)["code"] == -32602


def test_capability_aware_tool_asks_only_for_what_was_declared() -> None:
    name = "test_input_required_result_capabilities"
    sampling_only = result_of(tool_call(name, arguments={}, capabilities={"sampling": {}}))
    methods = [r["method"] for r in sampling_only["inputRequests"].values()]
    assert methods == ["sampling/createMessage"]
    everything = result_of(tool_call(name, arguments={}))
    assert len(everything["inputRequests"]) == 3
    nothing = result_of(tool_call(name, arguments={}, capabilities={}))
    assert nothing["resultType"] == "complete"


def test_missing_capability_is_refused_by_admission() -> None:
    refused = error_of(tool_call("test_missing_capability", arguments={}, capabilities={}))
    assert refused["code"] == -32021
    assert refused["data"] == {"requiredCapabilities": {"sampling": {}}}
    allowed = result_of(
        tool_call("test_missing_capability", arguments={}, capabilities={"sampling": {}})
    )
    assert allowed["resultType"] == "input_required"


def test_input_required_prompt_round_trip() -> None:
    get = {"name": "test_input_required_result_prompt"}
    first = result_of(request("prompts/get", get, capabilities=CAPABILITIES))
    assert list(first["inputRequests"]) == ["user_context"]
    retry = {
        **get,
        "inputResponses": {"user_context": accept(context="test context")},
        "requestState": first["requestState"],
    }
    done = result_of(request("prompts/get", retry, capabilities=CAPABILITIES))
    assert "test context" in done["messages"][0]["content"]["text"]


def test_lists_never_answer_input_required() -> None:
    for method in ("tools/list", "prompts/list"):
        assert result_of(request(method, capabilities=CAPABILITIES))["resultType"] == "complete"
