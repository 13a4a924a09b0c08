"""snodo.asking.sampling: the createMessage builder, its option checks, and response reading."""

from __future__ import annotations

from typing import Any

import pytest

from snodo.asking import sampling
from snodo.core.errors import InvalidParams
from snodo.core.result import MISSING
from snodo_wire.models import CreateMessageResult, TextContent, ToolUseContent
from tests.support.mrtr import ctx, wire_valid

USER = {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


# --- message -------------------------------------------------------------------------


def test_message_from_a_string_is_one_text_block() -> None:
    assert sampling.message("user", "hi") == {
        "role": "user",
        "content": {"type": "text", "text": "hi"},
    }


def test_message_keeps_blocks_and_lists_of_blocks() -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    audio = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
    assert sampling.message("user", image) == {"role": "user", "content": image}
    assert sampling.message("user", (image, audio)) == {"role": "user", "content": [image, audio]}


@pytest.mark.parametrize(
    ("role", "content", "match"),
    [
        ("system", "hi", "role"),
        ("User", "hi", "role"),
        ("user", [], "content"),
        ("user", {"type": "text"}, "TextContent|text"),
        ("user", {"type": "text", "content": "hi"}, "text"),
        ("user", {"type": "video", "data": "x"}, "SamplingMessage"),
        ("user", {"type": "image", "data": "x", "mime_type": "image/png"}, "mimeType"),
        ("user", {"type": "text", "text": 3}, "SamplingMessage"),
        ("user", [{"type": "text", "text": "a"}, "b"], "SamplingMessage"),
        ("user", 3, "SamplingMessage"),
        ("assistant", {"type": "tool_use", "id": "1", "name": "t"}, "input"),
        ("user", {"type": "tool_result", "tool_use_id": "1", "content": []}, "toolUseId"),
        ("user", {"type": "tool_result", "toolUseId": "1"}, "content"),
        ("user", {"type": "text", "text": "x", "_meta": {"n": float("nan")}}, "NaN"),
        ("user", {"type": "text", "text": "x", "_meta": {1: "a"}}, "keys must be strings"),
        ("user", {"type": "text", "text": "x", "_meta": {"s": {1, 2}}}, "set is not a JSON"),
    ],
)
def test_message_rejects_bad_shapes(role: Any, content: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sampling.message(role, content)


# --- create_message ------------------------------------------------------------------


def test_minimal_request_is_the_spec_shape() -> None:
    request = sampling.create_message([USER], max_tokens=100)
    assert request == {
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {
                    "role": "user",
                    "content": {"type": "text", "text": "What is the capital of France?"},
                }
            ],
            "maxTokens": 100,
        },
    }
    wire_valid(request)


def test_every_option_in_wire_shape() -> None:
    tool_use = {
        "type": "tool_use",
        "id": "call_1",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    tool_result = {
        "type": "tool_result",
        "toolUseId": "call_1",
        "content": [{"type": "text", "text": "18C"}],
        "structuredContent": {"celsius": 18},
        "isError": False,
        "_meta": {"cache": "k1"},
    }
    request = sampling.create_message(
        [
            sampling.message("user", "Weather in Paris?"),
            sampling.message("assistant", [tool_use]),
            sampling.message("user", [tool_result]),
        ],
        max_tokens=200,
        system_prompt="You are terse.",
        model_preferences={
            "hints": [{"name": "claude-3-sonnet"}, {"name": "gpt"}],
            "costPriority": 0,
            "speedPriority": 0.5,
            "intelligencePriority": 1,
        },
        temperature=0.2,
        stop_sequences=("\n\n", "END"),
        include_context="thisServer",
        metadata={"provider": {"top_k": 5}},
        tools=[WEATHER_TOOL],
        tool_choice={"mode": "auto"},
    )
    assert request == {
        "method": "sampling/createMessage",
        "params": {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
                {"role": "assistant", "content": [tool_use]},
                {"role": "user", "content": [tool_result]},
            ],
            "maxTokens": 200,
            "systemPrompt": "You are terse.",
            "modelPreferences": {
                "hints": [{"name": "claude-3-sonnet"}, {"name": "gpt"}],
                "costPriority": 0,
                "speedPriority": 0.5,
                "intelligencePriority": 1,
            },
            "temperature": 0.2,
            "stopSequences": ["\n\n", "END"],
            "includeContext": "thisServer",
            "metadata": {"provider": {"top_k": 5}},
            "tools": [WEATHER_TOOL],
            "toolChoice": {"mode": "auto"},
        },
    }
    wire_valid(request)


def test_request_is_a_copy() -> None:
    metadata: dict[str, Any] = {"a": [1]}
    request = sampling.create_message([USER], max_tokens=1, metadata=metadata)
    metadata["a"].append(2)
    assert request["params"]["metadata"] == {"a": [1]}


def test_include_context_none_and_tool_choice_none_pass_through() -> None:
    request = sampling.create_message(
        [USER],
        max_tokens=5,
        include_context="none",
        tools=[WEATHER_TOOL],
        tool_choice={"mode": "none"},
    )
    assert request["params"]["includeContext"] == "none"
    assert request["params"]["toolChoice"] == {"mode": "none"}
    assert (
        sampling.create_message([USER], max_tokens=5, tool_choice={})["params"]["toolChoice"] == {}
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"messages": []}, "messages"),
        ({"messages": USER}, "messages"),
        ({"messages": "hello"}, "messages"),
        ({"messages": [{"role": "user", "content": "hello"}]}, "SamplingMessage"),
        ({"messages": [{"role": "user"}]}, "SamplingMessage"),
        ({"messages": [{**USER, "name": "bob"}]}, r"messages\[0\]: unsupported key 'name'"),
        (
            {"messages": [USER, {"role": "tool", "content": USER["content"]}]},
            r"messages\[1\]\.role",
        ),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": -5}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 10.0}, "max_tokens"),
        ({"max_tokens": "10"}, "max_tokens"),
        ({"system_prompt": 1}, "system_prompt"),
        ({"model_preferences": []}, "model_preferences"),
        ({"model_preferences": {"cost_priority": 0.5}}, "unsupported key 'cost_priority'"),
        ({"model_preferences": {"costPriority": 1.5}}, "costPriority"),
        ({"model_preferences": {"speedPriority": -0.1}}, "speedPriority"),
        ({"model_preferences": {"intelligencePriority": True}}, "intelligencePriority"),
        ({"model_preferences": {"costPriority": "0.5"}}, "costPriority"),
        ({"model_preferences": {"costPriority": float("nan")}}, "costPriority"),
        ({"model_preferences": {"hints": "claude"}}, "hints"),
        ({"model_preferences": {"hints": ["claude"]}}, r"hints\[0\]"),
        ({"model_preferences": {"hints": [{"model": "claude"}]}}, r"hints\[0\]"),
        ({"model_preferences": {"hints": [{"name": 3}]}}, r"hints\[0\]"),
        ({"temperature": "0.5"}, "temperature"),
        ({"temperature": True}, "temperature"),
        ({"temperature": float("inf")}, "temperature"),
        ({"stop_sequences": "END"}, "stop_sequences"),
        ({"stop_sequences": ["END", 1]}, "stop_sequences"),
        ({"include_context": "everything"}, "include_context"),
        ({"include_context": "this_server"}, "include_context"),
        ({"metadata": []}, "metadata"),
        ({"metadata": {"x": object()}}, r"metadata\.x"),
        ({"metadata": {"x": float("nan")}}, r"metadata\.x"),
        ({"tools": WEATHER_TOOL}, "tools"),
        ({"tools": ["get_weather"]}, r"tools\[0\]"),
        ({"tools": [{"name": "t"}]}, r"tools\[0\].*inputSchema"),
        ({"tools": [{"name": "t", "input_schema": {"type": "object"}}]}, r"tools\[0\]"),
        ({"tools": [{"name": "t", "inputSchema": {"type": "array"}}]}, r"tools\[0\]"),
        ({"tools": [{"inputSchema": {"type": "object"}}]}, r"tools\[0\].*name"),
        ({"tools": [WEATHER_TOOL, WEATHER_TOOL]}, r"tools\[1\]\.name"),
        ({"tool_choice": "auto"}, "tool_choice"),
        ({"tool_choice": {"mode": "any"}}, r"tool_choice\.mode"),
        ({"tool_choice": {"mode": "auto", "name": "t"}}, "tool_choice"),
        ({"tool_choice": {"mode": "required"}}, "at least one tool"),
        ({"tools": [], "tool_choice": {"mode": "required"}}, "at least one tool"),
    ],
)
def test_create_message_rejects_invalid_options(kwargs: dict[str, Any], match: str) -> None:
    arguments: dict[str, Any] = {"messages": [USER], "max_tokens": 10, **kwargs}
    messages = arguments.pop("messages")
    with pytest.raises(ValueError, match=match):
        sampling.create_message(messages, **arguments)


# --- response ------------------------------------------------------------------------

REQUEST = sampling.create_message([USER], max_tokens=100)
TEXT_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "The capital of France is Paris."},
    "model": "claude-3-sonnet-20240307",
    "stopReason": "endTurn",
}


def test_missing_answer_is_missing() -> None:
    assert sampling.response(ctx(), "s", REQUEST) is MISSING
    assert sampling.response(ctx(other=TEXT_ANSWER), "s", REQUEST) is MISSING


def test_text_answer_is_the_generated_model() -> None:
    result = sampling.response(ctx(s=TEXT_ANSWER), "s", REQUEST)
    assert isinstance(result, CreateMessageResult)
    assert result.role == "assistant"
    assert result.model == "claude-3-sonnet-20240307"
    assert result.stop_reason == "endTurn"
    assert isinstance(result.content, TextContent)
    assert result.content.text == "The capital of France is Paris."
    assert result.model_dump(mode="json") == TEXT_ANSWER


def test_tool_use_answer_and_open_fields() -> None:
    answer = {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "id": "call_abc123",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
            {
                "type": "tool_use",
                "id": "call_def456",
                "name": "get_weather",
                "input": {"city": "London"},
            },
        ],
        "model": "m",
        "stopReason": "toolUse",
        "vendorField": 1,
    }
    result = sampling.response(ctx(s=answer), "s", REQUEST)
    assert isinstance(result, CreateMessageResult)
    assert isinstance(result.content, list)
    assert [block.id for block in result.content if isinstance(block, ToolUseContent)] == [
        "call_abc123",
        "call_def456",
    ]


SECRET = "private model output"


@pytest.mark.parametrize(
    "answer",
    [
        None,
        SECRET,
        [],
        {},
        {"role": "assistant", "content": {"type": "text", "text": SECRET}},  # no model
        {"role": "robot", "content": {"type": "text", "text": SECRET}, "model": "m"},
        {"role": "assistant", "content": SECRET, "model": "m"},
        {"role": "assistant", "content": [], "model": "m"},
        {"role": "assistant", "content": {"type": "text", "text": SECRET}, "model": 1},
        {
            "role": "assistant",
            "content": {"type": "text", "text": SECRET},
            "model": "m",
            "stopReason": 1,
        },
        {"role": "assistant", "content": {"type": "html", "html": SECRET}, "model": "m"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": SECRET}, {"type": "text"}],
            "model": "m",
        },
        {"action": "accept", "content": {"x": SECRET}},  # an ElicitResult under this key
        {"roots": []},
    ],
)
def test_malformed_answers_raise_invalid_params_without_echo(answer: Any) -> None:
    with pytest.raises(InvalidParams) as caught:
        sampling.response(ctx(s=answer), "s", REQUEST)
    assert caught.value.message == "Invalid sampling response for 's'"
    assert caught.value.code == -32602
    assert SECRET not in str(caught.value.to_error())


def test_python_field_names_in_an_answer_are_unknown_fields_not_aliases() -> None:
    answer = {**TEXT_ANSWER, "stop_reason": 1}
    del answer["stopReason"]
    result = sampling.response(ctx(s=answer), "s", REQUEST)
    assert isinstance(result, CreateMessageResult)
    assert "stopReason" not in result.model_dump()
    assert result.model_extra == {"stop_reason": 1}


def test_response_refuses_another_kind_of_request() -> None:
    with pytest.raises(ValueError, match="request"):
        sampling.response(ctx(s=TEXT_ANSWER), "s", {"method": "roots/list"})
