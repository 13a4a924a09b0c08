"""Built input requests are checked once, then frozen: what was checked is what is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest

from snodo import elicitation, roots, sampling
from snodo.core.input_requests import BuiltRequest
from snodo.core.result import input_required
from snodo.server import Server
from tests.support.wire import answer, request

FORM = elicitation.form(
    "Pick", {"type": "object", "properties": {"c": {"type": "string", "enum": ["a", "b"]}}}
)


@pytest.mark.parametrize(
    "built",
    [
        FORM,
        elicitation.url("Go", "https://example.com"),
        roots.list_roots(),
        sampling.create_message([sampling.message("user", "hi")], max_tokens=5),
    ],
)
def test_builders_return_frozen_requests(built: Any) -> None:
    assert isinstance(built, BuiltRequest)
    with pytest.raises(TypeError):
        built["method"] = "x"
    params = built.get("params")
    if params is not None:
        with pytest.raises(TypeError):
            params["message"] = "changed"
    assert json.loads(json.dumps(built)) == built


def test_nested_arrays_are_frozen_too() -> None:
    enum = FORM["params"]["requestedSchema"]["properties"]["c"]["enum"]
    assert enum == ["a", "b"]
    with pytest.raises(TypeError):
        enum.append("c")


def test_hand_made_requests_are_still_checked_by_admission() -> None:
    server = Server("s", "1")

    @server.tool
    def raw() -> Any:
        return input_required({"q": {"method": "elicitation/create", "params": {"mode": "form"}}})

    caps = {"elicitation": {}}
    error = answer(server, request("tools/call", {"name": "raw"}, capabilities=caps))["error"]
    assert error == {"code": -32603, "message": "Internal error"}
