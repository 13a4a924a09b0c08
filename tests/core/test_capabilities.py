"""Capability merging as its module's docstring states it: the union of missing paths is
idempotent and ignores order, so one set of needs always yields one ``requiredCapabilities``
object, and declaring that object is exactly what lets the requests through."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from snodo.core.capabilities import declares, merge, missing, needs, path_object

STEPS = ["sampling", "tools", "context", "elicitation", "form", "url", "roots"]
paths = st.lists(st.sampled_from(STEPS), min_size=1, max_size=3).map(tuple)
objects = st.lists(paths, max_size=5).map(lambda found: merge(*map(path_object, found)))


def leaves(obj: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """The paths ending in ``{}``: what an object of paths declares at its tips."""
    found: set[tuple[str, ...]] = set()
    for key, value in obj.items():
        found |= leaves(value, (*prefix, key)) if value else {(*prefix, key)}
    return found


def maximal(given_paths: list[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The paths no other given path extends."""
    unique = set(given_paths)
    return {p for p in unique if not any(q != p and q[: len(p)] == p for q in unique)}


@given(st.lists(objects, max_size=4), st.randoms())
def test_merge_ignores_order(parts: list[dict[str, Any]], random: Any) -> None:
    shuffled = list(parts)
    random.shuffle(shuffled)
    assert merge(*parts) == merge(*shuffled)


@given(objects, objects, objects)
def test_merge_is_idempotent_and_associative(a: Any, b: Any, c: Any) -> None:
    assert merge(a, a) == merge(a) == a
    assert merge(merge(a, b), b) == merge(a, b)
    assert merge(merge(a, b), c) == merge(a, merge(b, c))


@given(st.lists(paths, max_size=6))
def test_the_union_declares_the_given_paths_and_no_others(given_paths: Any) -> None:
    union = merge(*map(path_object, given_paths))
    assert all(declares(union, path) for path in given_paths)
    assert leaves(union) == maximal(given_paths)


elicitations = st.builds(
    lambda mode: {"method": "elicitation/create", "params": {} if mode is None else {"mode": mode}},
    st.sampled_from([None, "form", "url"]),
)
samplings = st.builds(
    lambda tools, context: {
        "method": "sampling/createMessage",
        "params": {
            **({"tools": []} if tools else {}),
            **({} if context is None else {"includeContext": context}),
        },
    },
    st.booleans(),
    st.sampled_from([None, "none", "thisServer", "allServers"]),
)
requests = st.lists(st.one_of(elicitations, samplings, st.just({"method": "roots/list"})))
declared = st.one_of(
    objects,
    st.just({"elicitation": {}}),
    st.just({"sampling": True}),  # not an object: declares nothing under it
)


@given(requests, declared, st.randoms())
def test_missing_is_one_object_whatever_the_order(asked: Any, have: Any, random: Any) -> None:
    shuffled = list(asked)
    random.shuffle(shuffled)
    assert missing(asked, have) == missing(shuffled, have)
    assert missing(asked + asked, have) == missing(asked, have)


@given(requests, declared)
def test_declaring_what_is_missing_lets_the_requests_through(asked: Any, have: Any) -> None:
    lacking = missing(asked, have)
    assert not any(declares(have, path) for path in leaves(lacking))
    if not (isinstance(have, dict) and have.get("elicitation") == {}):
        # `elicitation: {}` declares form mode only while it is empty (client/elicitation.mdx):
        # a client adding `url` to it must name `form` too, as the error lists only the missing
        assert missing(asked, merge(have, lacking)) == {}


# Literal cases, from the specification's pages.
ELICIT_FORM = {"method": "elicitation/create", "params": {"message": "Name?"}}
ELICIT_URL = {"method": "elicitation/create", "params": {"mode": "url", "url": "https://a.test"}}
SAMPLE = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 9}}
SAMPLE_TOOLS = {"method": "sampling/createMessage", "params": {"tools": [], "maxTokens": 9}}
LIST_ROOTS = {"method": "roots/list"}


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
