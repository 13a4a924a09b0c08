"""``Retry``, ``ErrorHandling`` and ``ResultLimit``: failures run again, mapped, masked,
counted, and results cut to size."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from snodo.core.errors import McpError
from snodo.middleware import ErrorHandling, ResultLimit, Retry
from snodo.server import Server
from tests.middleware.support import LegacyPeer, ask, call, synchronous


def flaky(failures: int, *middleware: Any) -> tuple[Server, list[str]]:
    """Tools and a resource that fail ``failures`` times, then answer."""
    ran: list[str] = []
    server = Server("flaky", "1.0.0", middleware=list(middleware))

    def attempt(what: str) -> str:
        ran.append(what)
        if ran.count(what) <= failures:
            raise ConnectionError(f"{what}: the upstream at 10.0.0.7 went away")
        return f"{what} done"

    @server.tool(inline=True)
    def fetch() -> str:
        return attempt("fetch")

    @server.tool(inline=True)
    def parse() -> str:
        ran.append("parse")
        raise ValueError("bad input near 'secret-key-9'")

    @server.resource("feed://latest", inline=True)
    def latest() -> str:
        return attempt("latest")

    return server, ran


@synchronous
async def test_retry_runs_a_tool_again_until_it_answers() -> None:
    retry = Retry(ConnectionError, attempts=3, delay=0)
    server, ran = flaky(2, retry)
    result = (await call(server, "fetch"))["result"]
    assert result["content"] == [{"type": "text", "text": "fetch done"}]
    assert ran == ["fetch"] * 3 and retry.retried == 2


@synchronous
async def test_retry_gives_the_last_failure_and_leaves_other_exceptions_alone() -> None:
    server, ran = flaky(5, Retry(ConnectionError, attempts=2, delay=0))
    result = (await call(server, "fetch"))["result"]
    assert result["isError"] is True
    assert "went away" in result["content"][0]["text"]
    assert (await call(server, "parse"))["result"]["isError"] is True
    assert ran == ["fetch", "fetch", "parse"]


@synchronous
async def test_retry_runs_a_resource_again_and_through_the_legacy_bridge() -> None:
    server, ran = flaky(1, Retry(ConnectionError, attempts=2, delay=0))
    read = await ask(server, "resources/read", {"uri": "feed://latest"})
    assert read["result"]["contents"][0]["text"] == "latest done"
    peer = LegacyPeer(server)
    await peer.initialize()
    del ran[:]
    answered = await peer.call("fetch")
    assert answered["result"]["content"] == [{"type": "text", "text": "fetch done"}]
    assert ran == ["fetch", "fetch"]


def test_retry_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="name the exceptions"):
        Retry()
    with pytest.raises(ValueError, match="attempts"):
        Retry(OSError, attempts=1)


@synchronous
async def test_error_handling_maps_masks_and_counts() -> None:
    handling = ErrorHandling(
        map={
            ConnectionError: "The feed is unavailable; try again in a minute",
            KeyError: McpError("No such entry"),
        },
        mask=True,
    )
    server, _ = flaky(9, handling)
    mapped = (await call(server, "fetch"))["result"]
    assert mapped == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "The feed is unavailable; try again in a minute"}],
        "isError": True,
        "_meta": mapped["_meta"],
    }
    masked = (await call(server, "parse"))["result"]
    assert masked["content"] == [
        {"type": "text", "text": "Tool parse failed; the server's log has the details"}
    ]
    read = await ask(server, "resources/read", {"uri": "feed://latest"})
    assert read["error"] == {
        "code": -32603,
        "message": "The feed is unavailable; try again in a minute",
    }
    assert "error" in await call(server, "missing")
    assert handling.counts == {
        "tools/call isError": 2,
        "resources/read -32603": 1,
        "tools/call -32602": 1,
    }


@synchronous
async def test_error_handling_can_turn_a_tool_failure_into_a_json_rpc_error() -> None:
    handling = ErrorHandling(
        map={ValueError: lambda exc: McpError(f"refused: {type(exc).__name__}")}
    )
    server, _ = flaky(0, handling)
    assert (await call(server, "parse"))["error"] == {
        "code": -32603,
        "message": "refused: ValueError",
    }


GIVES = "this server gives at most 1000"


def cut_server(limit: ResultLimit) -> Server:
    server = Server("big", "1.0.0", middleware=[limit])

    @server.tool(inline=True)
    def words(count: int) -> str:
        return " ".join(["élan"] * count)

    @server.tool(inline=True)
    def numbers(count: int) -> dict[str, list[int]]:
        return {"values": list(range(count))}

    @server.resource("blob://one", inline=True, mime_type="application/octet-stream")
    def blob() -> bytes:
        return bytes(4000)

    @server.resource("text://long", inline=True)
    def long() -> str:
        return "x" * 5000

    return server


def _size(result: dict[str, Any]) -> int:
    inner = {k: v for k, v in result.items() if k not in ("resultType", "_meta")}
    return len(json.dumps(inner, ensure_ascii=False, separators=(",", ":")).encode())


@synchronous
async def test_a_result_over_the_limit_is_cut_and_says_so() -> None:
    limit = ResultLimit(1000)
    server = cut_server(limit)
    small = (await call(server, "words", count=3))["result"]
    assert small["content"] == [{"type": "text", "text": "élan élan élan"}]
    big = (await call(server, "words", count=1000))["result"]
    text = big["content"][0]["text"]
    assert text.startswith("élan élan") and "isError" not in big
    whole = _size({"content": [{"type": "text", "text": " ".join(["élan"] * 1000)}]})
    assert text.endswith(
        f"[truncated: the result was {whole} bytes; this server gives at most 1000]"
    )
    assert _size(big) <= 1000
    typed = (await call(server, "numbers", count=1000))["result"]
    assert typed["isError"] is True and "structuredContent" not in typed
    assert _size(typed) <= 1000
    assert limit.cut == 2


@synchronous
async def test_contents_over_the_limit_keep_what_fits() -> None:
    server = cut_server(ResultLimit(1000))
    blob = (await ask(server, "resources/read", {"uri": "blob://one"}))["result"]
    whole = {
        "contents": [
            {
                "uri": "blob://one",
                "mimeType": "application/octet-stream",
                "blob": base64.b64encode(bytes(4000)).decode(),
            }
        ]
    }
    assert blob["contents"] == [
        {
            "uri": "blob://one",
            "mimeType": "text/plain",
            "text": f"[truncated: the result was {_size(whole)} bytes; {GIVES}]",
        }
    ]
    text = (await ask(server, "resources/read", {"uri": "text://long"}))["result"]
    assert text["contents"][0]["text"].startswith("xxxx")
    assert _size(text) <= 1000


@synchronous
async def test_only_the_named_tools_are_cut() -> None:
    server = cut_server(ResultLimit(1000, tools=["numbers"]))
    whole = (await call(server, "words", count=1000))["result"]
    assert whole["content"][0]["text"] == " ".join(["élan"] * 1000)
