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


def _emitting(sent: list[dict[str, Any]]) -> Context:
    return Context(
        request_id=1,
        request_method="tools/call",
        request_params={},
        protocol_version="2026-07-28",
        client_capabilities={},
        log_level="info",
        progress_token="p",
        emit=sent.append,
    )


def test_progress_and_log_send_at_once_whether_awaited_or_not() -> None:
    import asyncio

    plain: list[dict[str, Any]] = []
    ctx = _emitting(plain)
    ctx.report_progress(1, 2, "half")
    ctx.log("warning", "careful", logger="x")
    ctx.log("debug", "below the level asked for")

    awaited: list[dict[str, Any]] = []

    async def handler() -> None:
        ctx = _emitting(awaited)
        pending = ctx.report_progress(1, 2, "half")
        assert len(awaited) == 1  # sent before it is awaited
        assert await pending is None
        assert await ctx.log("warning", "careful", logger="x") is None
        assert await ctx.log("debug", "below the level asked for") is None

    asyncio.run(handler())
    assert (
        awaited
        == plain
        == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 1, "total": 2, "message": "half"},
            },
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "warning", "data": "careful", "logger": "x"},
            },
        ]
    )


def test_progress_without_a_token_is_nothing_awaited_or_not() -> None:
    import asyncio

    ctx = Context(
        request_id=1,
        request_method="tools/call",
        request_params={},
        protocol_version="2026-07-28",
        client_capabilities={},
    )

    async def handler() -> None:
        assert await ctx.report_progress(1) is None
        assert await ctx.log("emergency", "nobody asked") is None

    asyncio.run(handler())
    with pytest.raises(ValueError, match="unknown log level"):
        ctx.log("loud", "x")
