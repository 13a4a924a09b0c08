"""``timeout=``: a tool that takes longer ends as an isError result saying so, a resource
or prompt as a JSON-RPC error; an async handler is cancelled, a thread abandoned."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from snodo import Context, Server
from tests.support.wire import answer, request


def build() -> tuple[Server, dict[str, Any]]:
    server = Server("t", "1")
    seen: dict[str, Any] = {"cancelled": False, "release": threading.Event()}

    @server.tool(timeout=0.1)
    async def slow_async(ctx: Context) -> str:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise
        return "never"

    @server.tool(timeout=0.1)
    def slow_sync() -> str:
        seen["release"].wait(5)
        seen["finished"] = True
        return "never"

    @server.tool(timeout=5)
    async def quick() -> str:
        return "in time"

    @server.tool(timeout=0.1)
    async def own_timeout() -> str:
        raise TimeoutError("the upstream took too long")

    @server.resource("t://slow", timeout=0.1)
    async def slow_resource() -> str:
        await asyncio.sleep(5)
        return "never"

    @server.prompt(timeout=0.1)
    def slow_prompt() -> str:
        time.sleep(0.5)
        return "never"

    return server, seen


def test_a_tool_past_its_timeout_is_an_error_result_and_the_work_is_cancelled() -> None:
    server, seen = build()
    result = answer(server, request("tools/call", {"name": "slow_async"}))["result"]
    assert result["isError"] is True
    assert result["content"] == [
        {"type": "text", "text": "Tool slow_async did not finish within 0.1 s"}
    ]
    assert seen["cancelled"] is True


def test_a_sync_tool_past_its_timeout_is_abandoned_in_its_thread() -> None:
    server, seen = build()
    result = answer(server, request("tools/call", {"name": "slow_sync"}))["result"]
    assert "finished" not in seen  # answered while the thread still waits
    assert result["content"][0]["text"] == "Tool slow_sync did not finish within 0.1 s"
    seen["release"].set()


def test_in_time_is_untouched_and_a_handlers_own_timeout_error_is_its_own() -> None:
    server, _ = build()
    quick = answer(server, request("tools/call", {"name": "quick"}))["result"]
    assert quick["content"] == [{"type": "text", "text": "in time"}]
    own = answer(server, request("tools/call", {"name": "own_timeout"}))["result"]
    assert own["content"] == [{"type": "text", "text": "the upstream took too long"}]


@pytest.mark.parametrize(
    ("method", "params", "what"),
    [
        ("resources/read", {"uri": "t://slow"}, "resource t://slow"),
        ("prompts/get", {"name": "slow_prompt"}, "prompt slow_prompt"),
    ],
)
def test_a_resource_or_prompt_past_its_timeout_is_a_json_rpc_error(
    method: str, params: dict[str, Any], what: str
) -> None:
    server, _ = build()
    error = answer(server, request(method, params))["error"]
    assert error == {"code": -32603, "message": f"The {what} did not finish within 0.1 s"}


def test_a_timeout_must_be_positive() -> None:
    server = Server("t", "1")
    for bad in (0, -1):
        with pytest.raises(ValueError, match="timeout"):
            server.tool(name="t", timeout=bad)(lambda: "x")
    # Not a number: ValueError, or the compiled build's TypeError naming the type.
    with pytest.raises((ValueError, TypeError)):
        server.tool(name="t", timeout="5")(lambda: "x")  # type: ignore[arg-type]
