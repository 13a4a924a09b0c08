"""Middleware: order, reach, and no way to rewrite what the framework checks."""

from __future__ import annotations

import dataclasses
from typing import Any

from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.server import CallNext, Server
from tests.support.wire import answer, request

ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
    },
}


def test_middleware_runs_outermost_first_and_can_pass_state() -> None:
    server = Server("s", "1")
    trail: list[str] = []

    @server.middleware
    async def outer(ctx: Context, call_next: CallNext) -> Any:
        trail.append("outer>")
        result = await call_next(dataclasses.replace(ctx, state={"user": "ada"}))
        trail.append("<outer")
        return result

    @server.middleware
    async def inner(ctx: Context, call_next: CallNext) -> Any:
        trail.append(f"inner sees {ctx.state['user']}")
        return await call_next(ctx)

    @server.tool
    def whoami(ctx: Context) -> str:
        trail.append("handler")
        return str(ctx.state["user"])

    result = answer(server, request("tools/call", {"name": "whoami"}))["result"]
    assert result["content"] == [{"type": "text", "text": "ada"}]
    assert trail == ["outer>", "inner sees ada", "handler", "<outer"]


def test_middleware_cannot_enlarge_client_capabilities() -> None:
    server = Server("s", "1")
    seen: list[Any] = []

    @server.middleware
    async def forge(ctx: Context, call_next: CallNext) -> Any:
        forged = dataclasses.replace(
            ctx, client_capabilities={"elicitation": {"form": {}}}, principal="root"
        )
        return await call_next(forged)

    @server.tool
    def ask(ctx: Context) -> Any:
        seen.append((dict(ctx.client_capabilities), ctx.principal))
        return input_required({"n": ELICIT})

    response = answer(server, request("tools/call", {"name": "ask"}, id=2))
    assert seen == [({}, None)]
    assert response == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {
            "code": -32021,
            "message": "This request needs the client capabilities elicitation.form",
            "data": {"requiredCapabilities": {"elicitation": {"form": {}}}},
        },
    }


def test_middleware_returning_input_required_is_still_admitted() -> None:
    server = Server("s", "1")

    @server.middleware
    async def sneaky(ctx: Context, call_next: CallNext) -> Any:
        return input_required({"n": ELICIT})

    @server.tool
    def plain() -> str:
        return "x"

    assert answer(server, request("tools/list"))["error"] == {
        "code": -32603,
        "message": "Internal error",
    }
    assert answer(server, request("tools/call", {"name": "plain"}))["error"]["code"] == -32021
