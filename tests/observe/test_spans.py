"""Spans and metrics of MRTR flows, through the OpenTelemetry SDK's in-memory exporters."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.core.state.token import inspect
from snodo.server import Server, State
from tests.observe.otel_support import SECRET, Observed, answer, observed
from tests.support.wire import request

CITY = elicitation.form(
    "Which city?",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ACCEPTED = {"city": {"action": "accept", "content": {"city": "Oslo"}}}


def weather_server(seen: Observed, **state: Any) -> Server:
    sealing = State(secret=SECRET, **state)
    server = Server("test-server", "1.0.0", state=sealing, observer=seen.observer)

    @server.tool
    def forecast(ctx: Context) -> object:
        """Weather for the user's city."""
        answer = elicitation.response(ctx, "city", CITY)
        if isinstance(answer, elicitation.Accepted):
            return f"sunny in {answer.content['city']}"
        return input_required({"city": CITY}, request_state=ctx.seal({"asked": 1}))

    @server.tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("no luck")

    return server


def call(id: int = 1, **params: Any) -> dict[str, Any]:
    return request(
        "tools/call",
        {"name": "forecast", "arguments": {}, **params},
        id=id,
        capabilities={"elicitation": {"form": {}}},
    )


def two_rounds(server: Server) -> tuple[dict[str, Any], dict[str, Any]]:
    first = answer(server, call(1))
    state = first["result"]["requestState"]
    second = answer(server, call(2, inputResponses=ACCEPTED, requestState=state))
    return first, second


def test_a_two_round_flow_is_two_linked_spans_with_one_flow_id() -> None:
    seen = observed()
    first, second = two_rounds(weather_server(seen))
    assert first["result"]["resultType"] == "input_required"
    assert second["result"]["content"] == [{"type": "text", "text": "sunny in Oslo"}]

    one, two = seen.spans()
    assert (one.name, two.name) == ("tools/call forecast", "tools/call forecast")
    assert one.kind == two.kind == SpanKind.SERVER
    assert dict(one.attributes or {}) == {
        "gen_ai.tool.name": "forecast",
        "gen_ai.operation.name": "execute_tool",
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "1",
        "snodo.client.era": "modern",
        "mcp.protocol.version": "2026-07-28",
        "snodo.flow.id": one.attributes["snodo.flow.id"],  # type: ignore[index]
        "snodo.flow.round": 1,
        "snodo.result.type": "input_required",
    }
    flow_id = one.attributes["snodo.flow.id"]  # type: ignore[index]
    assert isinstance(flow_id, str) and len(flow_id) == 16
    assert two.attributes["snodo.flow.id"] == flow_id  # type: ignore[index]
    assert two.attributes["snodo.flow.round"] == 2  # type: ignore[index]
    assert two.attributes["snodo.result.type"] == "complete"  # type: ignore[index]
    # The retry links back to the round that sealed the state it brought.
    assert [(link.context.trace_id, link.context.span_id) for link in two.links] == [
        (one.context.trace_id, one.context.span_id)  # type: ignore[union-attr]
    ]
    assert dict(two.links[0].attributes or {}) == {"snodo.flow.round": 1}
    assert one.status.status_code == two.status.status_code == StatusCode.UNSET

    outcomes = {a["snodo.outcome"]: p.value for a, p in seen.points("snodo.server.requests")}
    assert outcomes == {"input_required": 1, "complete": 1}
    [(attributes, rounds)] = seen.points("snodo.flow.input_rounds")
    assert attributes == {"mcp.method.name": "tools/call", "snodo.outcome": "complete"}
    assert (rounds.count, rounds.sum) == (1, 1)
    durations = seen.points("mcp.server.operation.duration")
    assert sorted(p.count for _, p in durations) == [1, 1]


def test_the_flow_mark_is_as_readable_as_the_state_and_no_more() -> None:
    seen = observed()
    first = answer(weather_server(seen), call())
    token = first["result"]["requestState"]
    [span] = seen.spans()
    context = span.context
    assert context is not None
    expected = f"{span.attributes['snodo.flow.id']}.1.{context.trace_id:032x}{context.span_id:016x}"  # type: ignore[index]
    assert inspect(token)["flow"] == expected  # signed state: readable, as its data is

    hidden = observed()
    token = answer(weather_server(hidden, encrypted=True), call())["result"]["requestState"]
    assert set(inspect(token)) == {"version", "kid"}  # encrypted state: nothing shows
    assert hidden.spans()[0].attributes["snodo.flow.round"] == 1  # type: ignore[index]


def test_an_unobserved_server_seals_no_flow_mark() -> None:
    server = Server("test-server", "1.0.0", state_secret=SECRET)

    @server.tool
    def ask(ctx: Context) -> object:
        """Asks."""
        return input_required({"city": CITY}, request_state=ctx.seal({"asked": 1}))

    asked = request("tools/call", {"name": "ask"}, capabilities={"elicitation": {}})
    token = answer(server, asked)["result"]["requestState"]
    assert "flow" not in inspect(token)


REFUSED = {
    "jsonrpc": "2.0",
    "id": 2,
    "error": {"code": -32602, "message": "Invalid request state"},
}


def refused_reason(seen: Observed) -> Any:
    return seen.spans()[-1].attributes["snodo.state.refused_reason"]  # type: ignore[index]


def test_a_replayed_state_is_refused_with_its_reason_kept_on_the_server() -> None:
    seen = observed()
    server = weather_server(seen)  # one-time state: the default
    first, second = two_rounds(server)
    state = first["result"]["requestState"]
    assert second["result"]["resultType"] == "complete"
    replayed = answer(server, call(2, inputResponses=ACCEPTED, requestState=state))
    assert replayed == REFUSED
    assert "replayed" not in json.dumps(replayed)
    assert refused_reason(seen) == "replayed"
    span = seen.spans()[-1]
    assert span.attributes["error.type"] == "-32602"  # type: ignore[index]
    assert span.status.status_code == StatusCode.ERROR
    assert [(a, p.value) for a, p in seen.points("snodo.state.refused")] == [
        ({"snodo.state.refused_reason": "replayed"}, 1)
    ]
    # A broken flow counts no rounds: only the completed flow is in the histogram.
    assert [p.count for _, p in seen.points("snodo.flow.input_rounds")] == [1]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ("flip", "forged"),
        ("other-arguments", "forged"),
        ("late", "expired"),
        ("garbage", "malformed"),
    ],
)
def test_every_refusal_answers_the_same_bytes_whatever_its_reason(change: str, reason: str) -> None:
    now = [1_800_000_000.0]
    seen = observed()
    server = weather_server(seen, clock=lambda: now[0])
    state = answer(server, call())["result"]["requestState"]
    params: dict[str, Any] = {"inputResponses": ACCEPTED, "requestState": state}
    if change == "flip":
        params["requestState"] = state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]
    elif change == "other-arguments":
        params["arguments"] = {"days": 3}
    elif change == "late":
        now[0] += 3600
    else:
        params["requestState"] = "not a token"
    assert answer(server, call(2, **params)) == REFUSED
    assert refused_reason(seen) == reason
    assert [(a, p.value) for a, p in seen.points("snodo.state.refused")] == [
        ({"snodo.state.refused_reason": reason}, 1)
    ]


def test_trace_context_comes_from_meta_then_from_the_http_header() -> None:
    seen = observed()
    server = weather_server(seen)
    parent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    other = "00-11111111111111111111111111111111-2222222222222222-01"
    answer(server, request("tools/list", traceparent=parent))
    answer(server, request("tools/list"), headers={"traceparent": other})
    answer(server, request("tools/list", traceparent=parent), headers={"traceparent": other})
    answer(server, request("tools/list"))
    parents = [
        (f"{s.parent.trace_id:032x}", f"{s.parent.span_id:016x}") if s.parent else None
        for s in seen.spans()
    ]
    assert parents == [
        ("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7"),
        ("11111111111111111111111111111111", "2222222222222222"),
        ("0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7"),
        None,
    ]
    assert seen.spans()[0].context.trace_id == 0x0AF7651916CD43DD8448EB211C80319C  # type: ignore[union-attr]


def test_errors_tool_errors_and_unknown_methods() -> None:
    seen = observed()
    server = weather_server(seen)
    broken = answer(server, request("tools/call", {"name": "broken"}))
    assert broken["result"]["isError"] is True
    assert answer(server, request("no/such/method"))["error"]["code"] == -32601
    tool_span, unknown_span = seen.spans()
    assert tool_span.attributes["snodo.result.is_error"] is True  # type: ignore[index]
    assert tool_span.attributes["error.type"] == "tool_error"  # type: ignore[index]
    assert unknown_span.name == "no/such/method"
    assert unknown_span.attributes["error.type"] == "-32601"  # type: ignore[index]
    counted = sorted(
        (a["mcp.method.name"], a["snodo.outcome"], a.get("error.type"), p.value)
        for a, p in seen.points("snodo.server.requests")
    )
    # A method outside the table is _OTHER: a client cannot mint new metric series.
    assert counted == [("_OTHER", "error", "-32601", 1), ("tools/call", "tool_error", None, 1)]
    # A tool call that ends at once asked zero times.
    [(_, rounds)] = seen.points("snodo.flow.input_rounds")
    assert (rounds.count, rounds.sum) == (1, 0)


def test_the_request_log_is_one_json_line_per_request_with_the_span_ids(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("tests.observe.requests")
    seen = observed(request_log=logger)
    with caplog.at_level(logging.INFO, logger=logger.name):
        first, _ = two_rounds(weather_server(seen))
    lines = [json.loads(record.getMessage()) for record in caplog.records]
    spans = seen.spans()
    assert len(lines) == 2
    for line, span in zip(lines, spans, strict=True):
        assert line["trace_id"] == f"{span.context.trace_id:032x}"  # type: ignore[union-attr]
        assert line["span_id"] == f"{span.context.span_id:016x}"  # type: ignore[union-attr]
        assert line["snodo.flow.id"] == span.attributes["snodo.flow.id"]  # type: ignore[index]
        assert line["event"] == "mcp.request"
        assert line["gen_ai.tool.name"] == "forecast"
        assert isinstance(line["duration_ms"], float)
    assert [line["snodo.outcome"] for line in lines] == ["input_required", "complete"]
    assert [line["snodo.flow.round"] for line in lines] == [1, 2]
    # Never the arguments, the answers or the state.
    text = caplog.text
    assert "Oslo" not in text and first["result"]["requestState"] not in text


def test_listen_streams_are_counted_while_open() -> None:
    seen = observed()
    server = weather_server(seen)
    message = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    reply = asyncio.run(server.handle(message, emit=lambda note: None))
    assert reply.subscription is not None
    assert [p.value for _, p in seen.points("snodo.listen.streams")] == [1]
    server.close_subscription(reply.subscription)
    server.close_subscription(reply.subscription)
    assert [p.value for _, p in seen.points("snodo.listen.streams")] == [0]
    [span] = seen.spans()
    assert span.attributes["mcp.method.name"] == "subscriptions/listen"  # type: ignore[index]


def test_a_phase_is_a_child_span_of_the_request() -> None:
    seen = observed()
    server = Server("test-server", "1.0.0", observer=seen.observer)

    @server.tool
    def bridged() -> str:
        """Runs a step as its own span."""
        with server.observer.phase("legacy round", {"snodo.round": 1}):
            return "done"

    answer(server, request("tools/call", {"name": "bridged"}))
    child, parent = seen.spans()
    assert child.name == "legacy round"
    assert child.parent is not None and parent.context is not None
    assert child.parent.span_id == parent.context.span_id
    assert dict(child.attributes or {}) == {"snodo.round": 1}


def test_the_legacy_sessions_gauge() -> None:
    seen = observed()
    seen.observer.legacy_sessions(1)
    seen.observer.legacy_sessions(1)
    seen.observer.legacy_sessions(-1)
    assert [p.value for _, p in seen.points("snodo.legacy.sessions")] == [1]


def test_a_cancelled_request_still_ends_its_span() -> None:
    seen = observed()
    server = Server("test-server", "1.0.0", observer=seen.observer)

    @server.tool
    async def slow() -> str:
        """Never answers in time."""
        await asyncio.sleep(60)
        return "late"

    async def run() -> None:
        message = request("tools/call", {"name": "slow"})
        task = asyncio.ensure_future(server.handle(message))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    [span] = seen.spans()
    assert span.attributes["error.type"] == "cancelled"  # type: ignore[index]
    assert span.status.status_code == StatusCode.ERROR
    assert [a["snodo.outcome"] for a, _ in seen.points("snodo.server.requests")] == ["cancelled"]
