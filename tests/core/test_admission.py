"""Admission, the last check an InputRequiredResult passes (``snodo.core.admission``),
called directly: which methods may ask, what a hand-built request must be, and the one
-32021 that names every capability the client lacks."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from snodo.asking import elicitation, roots, sampling
from snodo.core.admission import admit
from snodo.core.errors import InternalError, MissingClientCapability
from snodo.core.result import InputRequired
from snodo.revisions import REVISIONS

FORM = elicitation.form("Your name?", {"type": "object", "properties": {"n": {"type": "string"}}})
SAMPLE = sampling.create_message([sampling.message("user", "hi")], max_tokens=5)
ROOTS = roots.list_roots()
EVERYTHING: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


def _asking(**requests: Any) -> InputRequired:
    return InputRequired(requests, request_state="sealed")


@pytest.mark.parametrize("method", ["tools/call", "resources/read", "prompts/get"])
@pytest.mark.parametrize("version", ["2026-07-28", "2026-12-01"])
def test_the_three_methods_answer_input_required(method: str, version: str) -> None:
    result = admit(method, _asking(a=FORM, b=SAMPLE, c=ROOTS), EVERYTHING, REVISIONS.of(version))
    assert result == {
        "resultType": "input_required",
        "inputRequests": {"a": FORM, "b": SAMPLE, "c": ROOTS},
        "requestState": "sealed",
    }
    model = REVISIONS.of(version).input_required_result
    assert model is not None
    model.model_validate(result)


@pytest.mark.parametrize("method", ["tools/list", "completion/complete", "resources/list"])
def test_any_other_method_is_a_server_bug(method: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, "snodo"), pytest.raises(InternalError):
        admit(method, _asking(a=FORM), EVERYTHING)
    assert f"{method} handler returned input_required" in caplog.text


def test_a_revision_without_the_result_refuses_it() -> None:
    with pytest.raises(InternalError):
        admit("tools/call", _asking(a=FORM), EVERYTHING, REVISIONS.of("2025-11-25"))


def test_every_missing_need_is_named_in_one_error() -> None:
    with pytest.raises(MissingClientCapability) as raised:
        admit("tools/call", _asking(a=FORM, b=SAMPLE, c=ROOTS), {"roots": {}})
    error = raised.value
    assert error.data == {"requiredCapabilities": {"elicitation": {"form": {}}, "sampling": {}}}
    assert "elicitation.form" in str(error) and "sampling" in str(error)


def test_a_declared_client_gets_no_error_for_what_it_declared() -> None:
    assert admit("prompts/get", _asking(c=ROOTS), {"roots": {"listChanged": True}})


def test_a_hand_built_request_is_checked_against_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = {"method": "elicitation/create", "params": {"message": 3}}
    with caplog.at_level(logging.ERROR, "snodo"), pytest.raises(InternalError):
        admit("tools/call", _asking(a=bad), EVERYTHING)
    assert "invalid input request" in caplog.text


def test_a_hand_built_valid_request_passes_and_is_still_admitted_by_capability() -> None:
    plain = {"method": "roots/list"}
    assert admit("tools/call", _asking(a=plain), {"roots": {}})["inputRequests"] == {"a": plain}
    with pytest.raises(MissingClientCapability):
        admit("tools/call", _asking(a=plain), {})


def test_a_state_that_is_not_text_is_refused_even_with_built_requests() -> None:
    try:
        outcome = InputRequired({"a": FORM}, request_state=7)  # type: ignore[arg-type]
    except TypeError:  # compiled (setup.py), the native class refuses it when made
        return
    with pytest.raises(InternalError):
        admit("tools/call", outcome, EVERYTHING)
