"""The server's fast Context build equals the constructor's, field for field."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any

import pytest

from snodo.core.context import Context, refilled
from snodo.core.request_path import request_context


def _values() -> dict[str, Any]:
    params = {"name": "echo", "arguments": {"text": "hi"}}
    return {
        "request_id": 7,
        "request_method": "tools/call",
        "request_params": MappingProxyType(params),
        "protocol_version": "2026-07-28",
        "client_capabilities": MappingProxyType({"elicitation": {}}),
        "client_info": {"name": "c", "version": "1"},
        "log_level": "info",
        "principal": "alice",
        "scopes": frozenset({"read"}),
        "progress_token": "p",
        "input_responses": MappingProxyType({}),
        "request_state": None,
        "transport": "http",
        "headers": {"host": "localhost"},
        "clock": lambda: 5.0,
        "emit": lambda note: None,
    }


REQUIRED = (
    "request_id",
    "request_method",
    "request_params",
    "protocol_version",
    "client_capabilities",
)


@pytest.mark.parametrize(
    "values",
    [
        _values(),
        {**_values(), "state_data": {"step": 1}, "sealer": str},
        # Only the required fields: every default, each factory's too, as the constructor's.
        {name: _values()[name] for name in REQUIRED},
    ],
    ids=["all", "state", "required-only"],
)
def test_request_context_equals_the_constructor(values: dict[str, Any]) -> None:
    fast, made = request_context(dict(values)), Context(**values)
    for spec in dataclasses.fields(Context):
        assert getattr(fast, spec.name) == getattr(made, spec.name), spec.name
    assert fast == made
    assert fast.state == {} and fast.state is not request_context(dict(values)).state


def test_request_context_is_frozen_and_replaceable() -> None:
    ctx = request_context(_values())
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.principal = "mallory"  # type: ignore[misc]
    assert dataclasses.replace(ctx, principal="bob").principal == "bob"
    assert ctx.principal == "alice"


def test_progress_is_tracked_per_context() -> None:
    sent: list[dict[str, Any]] = []
    ctx = request_context({**_values(), "emit": sent.append})
    ctx.report_progress(1)
    with pytest.raises(ValueError, match="increase"):
        ctx.report_progress(1)
    other = request_context({**_values(), "emit": sent.append})
    other.report_progress(1)
    assert [note["params"]["progress"] for note in sent] == [1, 1]


def test_refilled_equals_replace_and_shares_what_replace_shares() -> None:
    ctx = request_context(_values())
    fast = refilled(ctx, state_data={"step": 2}, sealer=str)
    slow = dataclasses.replace(ctx, state_data={"step": 2}, sealer=str)
    assert fast == slow
    assert fast.state is ctx.state is slow.state
    assert ctx.state_data is None and ctx.sealer is None
