"""A legacy session observed: its request is a span, the bridged rounds are its children."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.result import MISSING, InputRequired, input_required
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits
from tests.observe.otel_support import SECRET, observed

NAME = elicitation.form(
    "Your name?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


PARENT = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"


@pytest.mark.parametrize("traced", [False, True])
def test_a_bridged_flow_is_a_legacy_span_over_linked_round_spans(traced: bool) -> None:
    seen = observed()
    server = Server("test-server", "1.0.0", state_secret=SECRET, observer=seen.observer)

    @server.tool
    def greet(ctx: Context) -> InputRequired | str:
        """Ask a name, then greet."""
        answer = elicitation.response(ctx, "name", NAME)
        if answer is MISSING:
            return input_required({"name": NAME}, request_state=ctx.seal({"asked": True}))
        assert isinstance(answer, elicitation.Accepted)
        return f"Hello, {answer.content['name']}"

    kernel = LegacyKernel(server)
    session = LegacySession(LegacyLimits())

    def emit(message: dict[str, Any]) -> None:
        if message.get("method") == "elicitation/create":
            result = {"action": "accept", "content": {"name": "Ada"}}
            asyncio.get_running_loop().call_soon(session.resolve, message["id"], result, None)

    async def run() -> dict[str, Any]:
        initialize = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "test-client", "version": "1.0"},
        }
        for message in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ):
            await kernel.handle(session, message, transport="stdio", emit=emit)
        call: dict[str, Any] = {"name": "greet", "arguments": {}}
        if traced:  # the bridge passes the client's _meta on: the rounds still nest
            call["_meta"] = {"traceparent": PARENT}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
        reply = await kernel.handle(session, message, transport="stdio", emit=emit)
        assert reply.response is not None
        return reply.response

    response = asyncio.run(run())
    assert response["result"]["content"] == [{"type": "text", "text": "Hello, Ada"}]
    assert [p.value for _, p in seen.points("snodo.legacy.sessions")] == [1]
    session.close()
    session.close()
    assert [p.value for _, p in seen.points("snodo.legacy.sessions")] == [0]

    spans = {(s.name, s.attributes.get("snodo.flow.round")): s for s in seen.spans()}  # type: ignore[union-attr]
    legacy = spans[("tools/call greet", None)]
    one, two = spans[("tools/call greet", 1)], spans[("tools/call greet", 2)]
    assert legacy.attributes["snodo.client.era"] == "legacy"  # type: ignore[index]
    assert legacy.attributes["snodo.result.type"] == "complete"  # type: ignore[index]
    assert legacy.context is not None
    if traced:
        assert legacy.parent is not None and legacy.parent.span_id == 0x00F067AA0BA902B7
        assert legacy.context.trace_id == 0x0AF7651916CD43DD8448EB211C80319C
    for round_span in (one, two):
        assert round_span.parent is not None
        assert round_span.parent.span_id == legacy.context.span_id
        assert round_span.context is not None
        assert round_span.context.trace_id == legacy.context.trace_id
    assert two.links[0].context.span_id == one.context.span_id  # type: ignore[union-attr]
    initialize_span = spans[("initialize", None)]
    assert initialize_span.attributes["snodo.client.era"] == "legacy"  # type: ignore[index]


def test_a_legacy_request_is_counted_by_the_method_its_revision_defines() -> None:
    """``initialize``, ``ping`` and ``logging/setLevel`` are the legacy revision's
    methods, so they are their own metric series; an unknown one is still ``_OTHER``."""
    seen = observed()
    server = Server("test-server", "1.0.0", state_secret=SECRET, observer=seen.observer)
    kernel = LegacyKernel(server)
    session = LegacySession(LegacyLimits())
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test-client", "version": "1.0"},
    }

    async def run() -> None:
        for message in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "info"}},
            {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
        ):
            await kernel.handle(session, message, transport="stdio", emit=lambda m: None)

    asyncio.run(run())
    session.close()
    counted = sorted(a["mcp.method.name"] for a, _ in seen.points("snodo.server.requests"))
    # (initialize is answered through the server's own server/discover, counted too)
    assert {"initialize", "logging/setLevel", "ping"} <= set(counted)
    assert counted.count("_OTHER") == 1
