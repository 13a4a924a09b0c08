"""The one answer reader: elicitation, sampling and roots read answers the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snodo import elicitation, roots, sampling
from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.core.result import MISSING
from tests.support.mrtr import ctx

Reader = Callable[[Context, str, Mapping[str, Any]], object]

KINDS: list[tuple[str, Reader, Callable[[], Mapping[str, Any]], dict[str, Any]]] = [
    (
        "elicitation",
        elicitation.response,
        lambda: elicitation.form("Name?", {"type": "object", "properties": {}}),
        {"action": "decline"},
    ),
    (
        "sampling",
        sampling.response,
        lambda: sampling.create_message([sampling.message("user", "Hi")], max_tokens=5),
        {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"},
    ),
    ("roots", roots.response, roots.list_roots, {"roots": []}),
]
IDS = [kind for kind, *_ in KINDS]
OTHER = {"method": "tools/call", "params": {}}


@pytest.mark.parametrize(("kind", "read", "build", "good"), KINDS, ids=IDS)
def test_a_request_of_another_kind_is_refused_whether_or_not_an_answer_came(
    kind: str, read: Reader, build: Callable[[], Mapping[str, Any]], good: dict[str, Any]
) -> None:
    for context in (ctx(), ctx(k=good)):
        with pytest.raises(ValueError, match="request: not a"):
            read(context, "k", OTHER)


@pytest.mark.parametrize(("kind", "read", "build", "good"), KINDS, ids=IDS)
def test_no_answer_is_missing_and_a_good_one_is_read(
    kind: str, read: Reader, build: Callable[[], Mapping[str, Any]], good: dict[str, Any]
) -> None:
    request = build()
    assert read(ctx(other=good), "k", request) is MISSING
    assert read(ctx(k=good), "k", request) is not MISSING


@pytest.mark.parametrize(("kind", "read", "build", "good"), KINDS, ids=IDS)
def test_a_malformed_answer_is_one_error_naming_only_the_key(
    kind: str, read: Reader, build: Callable[[], Mapping[str, Any]], good: dict[str, Any]
) -> None:
    secret = "hunter2-personal"
    with pytest.raises(InvalidParams) as raised:
        read(ctx(k={"unexpected": secret}), "k", build())
    assert raised.value.message == f"Invalid {kind} response for 'k'"
    assert secret not in str(raised.value.to_error())


ASKED = {"method": "elicitation/create"}
"""The question ``read`` is told was asked (a hand-built context counts any as asked)."""


def test_the_request_is_a_required_argument_of_every_reader() -> None:
    for read in (elicitation.response, sampling.response, roots.response):
        with pytest.raises(TypeError):
            read(ctx(), "k")  # type: ignore[call-arg]


def test_an_answer_the_server_checked_is_read_as_that_model_and_only_for_that_answer() -> None:
    from dataclasses import replace

    from snodo.core.input_responses import check_responses, read
    from snodo_wire import ElicitResult

    # Not plain (a tuple where JSON gives a list: a caller handing decoded values), but
    # valid: the model checks it, and ``read`` reuses that model.
    accepted = {"action": "accept", "content": {"name": "Ada", "tags": ("a", "b")}}
    checked = check_responses({"who": accepted})
    assert checked["who"][0] is accepted
    retry = replace(ctx(who=accepted), checked_answers=checked)
    assert read(retry, "who", ASKED, ElicitResult, "elicitation") is checked["who"][1]
    # Another raw answer under the same key (a task's later round) is validated afresh.
    later = replace(retry, input_responses={"who": {"action": "launch"}})
    with pytest.raises(InvalidParams, match="Invalid elicitation response for 'who'"):
        read(later, "who", ASKED, ElicitResult, "elicitation")
    declined = replace(retry, input_responses={"who": {"action": "decline"}})
    answer = read(declined, "who", ASKED, ElicitResult, "elicitation")
    assert isinstance(answer, ElicitResult) and answer.action == "decline"


def test_an_answer_whose_nested_models_have_aliases_is_read_by_alias_only() -> None:
    from dataclasses import replace

    from snodo.core.input_responses import check_responses, read
    from snodo_wire import ListRootsResult

    # "meta" is Root's field name, not its wire name "_meta": the retry's check, which
    # accepts either, must not hand ``read`` (wire names only) a model holding it.
    answer = {"roots": [{"uri": "file:///work", "meta": {"by": "name"}}]}
    retry = replace(ctx(k=answer), checked_answers=check_responses({"k": answer}))
    read_back = read(retry, "k", {"method": "roots/list"}, ListRootsResult, "roots")
    assert read_back == ListRootsResult.model_validate(answer, by_alias=True, by_name=False)
    assert read_back != ListRootsResult.model_validate(answer)


answer_values = (
    st.text(max_size=5)
    | st.integers()
    | st.floats(allow_nan=False)
    | st.booleans()
    | st.none()
    | st.lists(st.text(max_size=3) | st.integers(), max_size=3)
    | st.tuples(st.text(max_size=3))
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)
elicit_answers = st.fixed_dictionaries(
    {},
    optional={
        "action": st.sampled_from(["accept", "decline", "cancel", "launch"]) | st.integers(),
        "content": st.dictionaries(st.text(max_size=4), answer_values, max_size=4) | answer_values,
        "_meta": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    },
)


@settings(max_examples=1000)
@given(elicit_answers)
def test_a_plain_elicitation_answer_is_one_the_model_accepts_and_reads_the_same(
    answer: dict[str, Any],
) -> None:
    """What ``plain_elicit_result`` accepts, ``ElicitResult`` accepts too, with the same
    action and content, so ``elicitation.response`` may read the answer without it."""
    from pydantic import ValidationError

    from snodo.core.input_responses import plain_elicit_result
    from snodo_wire import ElicitResult

    if not plain_elicit_result(answer):
        return
    try:
        model = ElicitResult.model_validate(answer, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise AssertionError(f"plain, but the model refuses {answer!r}") from exc
    assert model.action == answer["action"]
    if "content" in answer:
        assert model.content == answer["content"]
        assert all(type(model.content[k]) is type(v) for k, v in answer["content"].items())
    else:
        assert not isinstance(model.content, dict)


def test_the_usual_answers_are_plain_and_odd_ones_go_to_the_model() -> None:
    from snodo.core.input_responses import plain_elicit_result

    for usual in (
        {"action": "accept", "content": {"theme": "dark", "n": 3, "x": 0.5, "ok": True}},
        {"action": "accept", "content": {"tags": ["a", "b"]}},
        {"action": "decline"},
        {"action": "cancel", "_meta": {"k": 1}},
    ):
        assert plain_elicit_result(usual)
    for odd in (
        {"action": "launch"},
        {"content": {}},
        {"action": "accept", "content": {"n": None}},
        {"action": "accept", "content": {"tags": [1]}},
        {"action": "accept", "content": {"deep": {"a": 1}}},
        {"action": "accept", "content": []},
        ["accept"],
    ):
        assert not plain_elicit_result(odd)
