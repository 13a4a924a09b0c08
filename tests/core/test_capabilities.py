"""snodo.core.capabilities: which capabilities an input request needs, whether a request
declared them, and the one object -32021 names for all that is missing."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from snodo.core.capabilities import declares, merge, missing, needs, path_object

steps = st.sampled_from(["sampling", "tools", "context", "elicitation", "form", "url", "roots"])
paths = st.lists(steps, min_size=1, max_size=4).map(tuple)
# A capability object as clients declare it: objects all the way down, each path ending in {}.
capability_objects = st.lists(paths, max_size=6).map(
    lambda found: merge(*(path_object(p) for p in found))
)

ELICIT_FORM = {"method": "elicitation/create", "params": {"message": "Name?"}}
ELICIT_URL = {"method": "elicitation/create", "params": {"mode": "url", "url": "https://a.test"}}
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 9}}
SAMPLE_TOOLS = {"method": "sampling/createMessage", "params": {"tools": [], "maxTokens": 9}}
LIST_ROOTS = {"method": "roots/list"}


@given(capability_objects)
def test_merge_is_idempotent(obj: dict[str, Any]) -> None:
    assert merge(obj, obj) == merge(obj) == obj
    assert merge(merge(obj), obj) == obj


@given(st.lists(capability_objects, max_size=5), st.randoms(use_true_random=False))
def test_merge_ignores_order(objects: list[dict[str, Any]], random: Any) -> None:
    shuffled = list(objects)
    random.shuffle(shuffled)
    merged = merge(*objects)
    assert merged == merge(*shuffled)
    assert list(merged) == sorted(merged)


@given(st.lists(paths, min_size=1, max_size=6))
def test_the_union_declares_every_path_merged_into_it(found: list[tuple[str, ...]]) -> None:
    union = merge(*(path_object(p) for p in found))
    assert all(declares(union, p) for p in found)


def test_a_path_becomes_nested_objects_ending_in_an_empty_one() -> None:
    assert path_object(("sampling", "tools")) == {"sampling": {"tools": {}}}


def test_a_path_is_declared_when_every_step_is_an_object() -> None:
    assert declares({"sampling": {"tools": {}}}, ("sampling", "tools"))
    assert not declares({"sampling": {}}, ("sampling", "tools"))
    assert not declares({"sampling": True}, ("sampling",))
    assert not declares({"sampling": {"tools": None}}, ("sampling", "tools"))


def test_an_empty_elicitation_object_declares_form_mode_alone() -> None:
    # client/elicitation.mdx: `elicitation: {}` is form mode.
    assert declares({"elicitation": {}}, ("elicitation", "form"), empty_parent_satisfies=True)
    assert not declares({"elicitation": {"url": {}}}, ("elicitation", "form"), True)
    assert not declares({}, ("elicitation", "form"), empty_parent_satisfies=True)


def test_each_input_request_needs_what_its_params_ask_for() -> None:
    assert [r.requires for r in needs(ELICIT_FORM)] == [("elicitation", "form")]
    assert [r.requires for r in needs(ELICIT_URL)] == [("elicitation", "url")]
    assert [r.requires for r in needs(SAMPLE)] == [("sampling",)]
    assert [r.requires for r in needs(SAMPLE_TOOLS)] == [("sampling",), ("sampling", "tools")]
    assert [r.requires for r in needs(LIST_ROOTS)] == [("roots",)]
    assert needs({"method": "tools/call", "params": {}}) == []


def test_what_is_missing_is_one_object_whatever_the_order_of_the_requests() -> None:
    asked = [SAMPLE_TOOLS, ELICIT_URL, LIST_ROOTS]
    declared = {"sampling": {}, "elicitation": {}}
    expected = {"elicitation": {"url": {}}, "roots": {}, "sampling": {"tools": {}}}
    assert missing(asked, declared) == expected
    assert missing(list(reversed(asked)), declared) == expected
    assert missing(asked, merge(declared, expected)) == {}
