"""``plain_call_params`` spares the model only for params the model accepts."""

from __future__ import annotations

import copy
from collections import OrderedDict, UserDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from snodo.core import plain_params
from snodo.core.plain_params import _META_NAMES, _PARAMS_NAMES, plain_call_params
from snodo_wire import models
from snodo_wire.protocol import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)

Params = models.CallToolRequestParams


def _fields(model: type[models.BaseModel]) -> dict[str, str]:
    return {name: field.alias or name for name, field in model.model_fields.items()}


def test_the_shapes_are_those_of_the_pinned_models() -> None:
    # Each shape plain_params knows, as (field name, key on the wire): a regenerated
    # model that adds, drops or renames a field fails here before it can be misjudged.
    assert _fields(Params) == {
        "meta": "_meta",
        "arguments": "arguments",
        "input_responses": "inputResponses",
        "name": "name",
        "request_state": "requestState",
    }
    assert {name for name, key in _fields(Params).items() if name != key} == _PARAMS_NAMES
    assert _fields(models.RequestMetaObject) == {
        "io_modelcontextprotocol_client_capabilities": META_CLIENT_CAPABILITIES,
        "io_modelcontextprotocol_client_info": META_CLIENT_INFO,
        "io_modelcontextprotocol_log_level": META_LOG_LEVEL,
        "io_modelcontextprotocol_protocol_version": META_PROTOCOL_VERSION,
        "progress_token": "progressToken",
    }
    assert set(_fields(models.RequestMetaObject)) == _META_NAMES
    assert set(_fields(models.ClientCapabilities)) == {
        "elicitation",
        "experimental",
        "extensions",
        "roots",
        "sampling",
    }
    assert set(_fields(models.ElicitationCapability)) == {"form", "url"}
    assert set(_fields(models.SamplingCapability)) == {"context", "tools"}
    assert _fields(models.RootsCapability) == {}
    required = {n for n, f in models.Implementation.model_fields.items() if f.is_required()}
    assert required == {"name", "version"}
    assert models.BaseModel.model_config.get("extra") == "allow"


def _accepted(params: Any) -> bool:
    try:
        Params.model_validate(params)
    except ValidationError:
        return False
    return True


odd = st.sampled_from(
    [None, True, False, 0, 1.5, "x", "loud", [], {}, {"x": 1}, {"x": {}}, ("t",), 2**70, object()]
)
text = st.text(max_size=3)
empty: st.SearchStrategy[dict[str, Any]] = st.builds(dict)
names = st.dictionaries(text, empty, max_size=2)
capabilities = st.fixed_dictionaries(
    {},
    optional={
        "elicitation": st.fixed_dictionaries({}, optional={"form": empty, "url": empty}),
        "sampling": st.fixed_dictionaries({}, optional={"context": empty, "tools": empty}),
        "roots": st.dictionaries(text, odd, max_size=2),
        "experimental": names,
        "extensions": names,
        "io.example/other": odd,
    },
)
client_info = st.fixed_dictionaries(
    {"name": text, "version": text}, optional={"title": text, "description": text}
)
meta = st.fixed_dictionaries(
    {META_PROTOCOL_VERSION: st.just("2026-07-28"), META_CLIENT_CAPABILITIES: capabilities},
    optional={
        META_CLIENT_INFO: client_info,
        META_LOG_LEVEL: st.sampled_from(["debug", "info", "emergency"]),
        "progressToken": text | st.integers(),
        "io.example/other": odd,
        "traceparent": text,
    },
)
valid = st.fixed_dictionaries(
    {"_meta": meta, "name": text},
    optional={
        "arguments": st.dictionaries(text, odd, max_size=3),
        "requestState": text,
        "inputResponses": empty,
        "task": odd,
    },
)
CAPS = ("_meta", META_CLIENT_CAPABILITIES)
INFO = ("_meta", META_CLIENT_INFO)
PLACES: list[tuple[Any, ...]] = [
    ("_meta",),
    ("name",),
    ("arguments",),
    ("arguments", 1),
    ("requestState",),
    ("inputResponses",),
    ("inputResponses", "a"),
    ("meta",),
    ("request_state",),
    ("input_responses",),
    (7,),
    ("_meta", META_PROTOCOL_VERSION),
    ("_meta", META_LOG_LEVEL),
    ("_meta", "progressToken"),
    ("_meta", "progress_token"),
    ("_meta", "io_modelcontextprotocol_protocol_version"),
    ("_meta", 7),
    CAPS,
    (*CAPS, "elicitation"),
    (*CAPS, "elicitation", "form"),
    (*CAPS, "elicitation", "other"),
    (*CAPS, "sampling"),
    (*CAPS, "sampling", "tools"),
    (*CAPS, "sampling", "other"),
    (*CAPS, "roots"),
    (*CAPS, "extensions"),
    (*CAPS, "extensions", "io.example/x"),
    (*CAPS, "experimental", 3),
    (*CAPS, 7),
    INFO,
    (*INFO, "name"),
    (*INFO, "version"),
    (*INFO, "title"),
    (*INFO, "icons"),
    (*INFO, "website_url"),
]
changes = st.lists(st.tuples(st.sampled_from(PLACES), odd | text | empty), max_size=2)


def _changed(params: dict[str, Any], place: tuple[Any, ...], value: Any) -> None:
    node: Any = params
    for step in place[:-1]:
        if type(node) is not dict:
            return
        node = node.setdefault(step, {})
    if type(node) is dict:
        node[place[-1]] = value


@settings(max_examples=1000)
@given(valid, changes)
def test_what_it_accepts_the_model_accepts(
    candidate: dict[str, Any], edits: list[tuple[tuple[Any, ...], Any]]
) -> None:
    for place, value in edits:
        _changed(candidate, place, value)
    if plain_call_params(candidate):
        assert _accepted(candidate)
    elif not edits:
        raise AssertionError(f"valid params not recognised as plain: {candidate}")
    # On a retry whose answers were checked one by one, as the model sees the rest.
    if plain_call_params(candidate, answers_checked=True):
        answers = candidate.get("inputResponses", {})
        assert type(answers) is dict and all(type(key) is str for key in answers)
        assert _accepted({**candidate, "inputResponses": {}})


USUAL: list[dict[str, Any]] = [
    {
        "_meta": {
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {},
        },
        "name": "echo",
    },
    {
        "_meta": {
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {
                "elicitation": {"form": {}, "url": {}},
                "sampling": {},
                "roots": {"listChanged": True},
                "extensions": {"io.modelcontextprotocol/tasks": {}},
            },
            META_CLIENT_INFO: {"name": "client", "version": "1.0", "title": "Client"},
            META_LOG_LEVEL: "debug",
            "progressToken": 7,
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        },
        "name": "theme",
        "arguments": {"user": "alice", "nested": {"deep": [1, 2.5, None]}},
        "requestState": "v1.key.payload.mac",
        "inputResponses": {},
    },
]


def test_the_usual_params_are_plain_and_valid() -> None:
    for candidate in USUAL:
        assert plain_call_params(candidate)
        assert _accepted(candidate)


def test_checked_answers_are_looked_at_only_for_their_object_and_keys() -> None:
    answered = {**USUAL[1], "inputResponses": {"theme": {"action": "accept"}}}
    assert not plain_call_params(answered)  # unchecked answers: the model's to judge
    assert plain_call_params(answered, answers_checked=True)
    for odd in ([], {7: {"action": "accept"}}, "answers"):
        assert not plain_call_params({**answered, "inputResponses": odd}, answers_checked=True)


def test_anything_unusual_goes_to_the_model() -> None:
    usual = USUAL[1]
    for changed in (
        {**usual, "request_state": "x"},  # a field's name, validated by name
        {**usual, "inputResponses": {"a": {}}},
        {**usual, "arguments": {1: "x"}},
        {**usual, "_meta": {**usual["_meta"], "progressToken": True}},
        {**usual, "_meta": {**usual["_meta"], META_LOG_LEVEL: "loud"}},
        {**usual, "_meta": {**usual["_meta"], META_CLIENT_INFO: {"name": "c"}}},
        {**usual, "_meta": {**usual["_meta"], META_CLIENT_CAPABILITIES: {"sampling": {"x": 1}}}},
        {"name": "echo"},
    ):
        assert not plain_call_params(changed)


@pytest.fixture
def no_kept_metas() -> None:
    """Forget the _meta objects kept by earlier tests (generated ones fill the room)."""
    plain_params._KNOWN_METAS.clear()


class _Text(str):
    """A str subclass: equal to the str it was made from."""


def _kept_meta() -> dict[str, Any]:
    return {
        META_PROTOCOL_VERSION: "2026-07-28",
        META_CLIENT_CAPABILITIES: {
            "elicitation": {"form": {}},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "roots": {},
            "x-custom": {"any": [1, 2]},
        },
        META_CLIENT_INFO: {"name": "client", "version": "1.0"},
        META_LOG_LEVEL: "info",
    }


@pytest.mark.usefixtures("no_kept_metas")
def test_a_meta_equal_to_a_kept_one_is_plain_as_the_model_finds_it() -> None:
    """A kept _meta answers for any equal one, whatever its mappings and strings are
    made of: the model takes each of those too (the module's claim)."""
    meta = _kept_meta()
    assert plain_call_params({"name": "echo", "_meta": meta})
    assert meta in plain_params._KNOWN_METAS
    capabilities = meta[META_CLIENT_CAPABILITIES]
    for equal_capabilities in (
        UserDict(capabilities),
        OrderedDict(capabilities),
        {**capabilities, "elicitation": UserDict({"form": OrderedDict()})},
        {**capabilities, "elicitation": {_Text("form"): {}}},
    ):
        variant = {
            **meta,
            META_CLIENT_CAPABILITIES: equal_capabilities,
            META_LOG_LEVEL: _Text("info"),
            META_CLIENT_INFO: {"name": _Text("client"), "version": "1.0"},
        }
        assert variant == meta
        params = {"name": "echo", "_meta": variant}
        assert plain_call_params(params)
        assert _accepted(params)


@pytest.mark.usefixtures("no_kept_metas")
def test_a_kept_meta_is_a_copy_and_the_kept_ones_are_bounded() -> None:
    meta = _kept_meta()
    meta[META_CLIENT_INFO] = {"name": "copied", "version": "1.0"}
    assert plain_call_params({"name": "echo", "_meta": meta})
    meta[META_CLIENT_INFO]["version"] = 1  # the request's own, changed after
    assert not plain_call_params({"name": "echo", "_meta": copy.deepcopy(meta)})
    for number in range(2 * plain_params.MAX_KNOWN_METAS):
        other = {**_kept_meta(), META_CLIENT_INFO: {"name": f"c{number}", "version": "1"}}
        assert plain_call_params({"name": "echo", "_meta": other})
    assert len(plain_params._KNOWN_METAS) <= plain_params.MAX_KNOWN_METAS


@pytest.mark.usefixtures("no_kept_metas")
def test_a_meta_with_a_progress_token_is_never_kept() -> None:
    """1 equals True: a kept token of 1 would pass a token of True, which the model's
    progress token refuses."""
    with_token = {**_kept_meta(), "progressToken": 1}
    assert plain_call_params({"name": "echo", "_meta": with_token})
    assert with_token not in plain_params._KNOWN_METAS
    assert not plain_call_params({"name": "echo", "_meta": {**with_token, "progressToken": True}})
