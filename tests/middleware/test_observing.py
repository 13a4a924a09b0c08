"""``Timing`` and ``Logging``: what they record of each request, in both eras, and what
they never write down."""

from __future__ import annotations

import json
import logging

import pytest

from snodo.core.errors import InvalidParams
from snodo.middleware import Logging, Timing
from snodo.server import Server
from tests.middleware.support import LegacyPeer, ask, call, synchronous
from tests.support.wire import request


class Ticks:
    """A clock that moves 5 ms each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.005
        return self.now


def served(*middleware: object) -> Server:
    server = Server("observed", "1.0.0", middleware=list(middleware))  # type: ignore[arg-type]

    @server.tool(inline=True)
    def login(user: str, password: str) -> str:
        return f"welcome {user}"

    @server.tool(inline=True)
    def refuse() -> str:
        raise InvalidParams("no")

    @server.tool(inline=True)
    def fail() -> str:
        raise RuntimeError("the database password is hunter2")

    @server.resource_template("files://report{?token}", inline=True)
    def report(token: str) -> str:
        return "report"

    return server


@synchronous
async def test_timing_counts_by_method_and_item() -> None:
    timing = Timing(clock=Ticks())
    server = served(timing)
    await call(server, "login", user="ada", password="x")
    await call(server, "login", user="bob", password="y")
    await ask(server, "tools/list")
    calls = timing.stats["tools/call"]
    assert calls.count == 2
    assert calls.total_ms == pytest.approx(10.0)
    assert calls.longest_ms == pytest.approx(5.0)
    assert timing.stats["tools/call login"].count == 2
    assert timing.stats["tools/list"].count == 1
    assert timing.stats["tools/list"].mean_ms == pytest.approx(5.0)


@synchronous
async def test_one_line_per_request_and_no_secret_in_it(caplog: pytest.LogCaptureFixture) -> None:
    server = served(Logging(clock=Ticks()))
    with caplog.at_level(logging.INFO, logger="snodo.requests"):
        reply = await server.handle(
            request(
                "tools/call", {"name": "login", "arguments": {"user": "ada", "password": "s3cret"}}
            ),
            principal="ada@example.com",
        )
        assert reply.response is not None
        await call(server, "refuse")
        await call(server, "fail")
        await ask(server, "resources/read", {"uri": "files://report?token=abc123"})
    lines = [r.getMessage() for r in caplog.records if r.name == "snodo.requests"]
    assert len(lines) == 4
    first = json.loads(lines[0])
    assert first == {
        "method": "tools/call",
        "item": "login",
        "principal": "ada@example.com",
        "transport": "memory",
        "version": "2026-07-28",
        "retry": False,
        "arguments": ["password", "user"],
        "outcome": "complete",
        "code": None,
        "ms": 5.0,
    }
    assert caplog.records[0].mcp == first  # type: ignore[attr-defined]
    assert [json.loads(line)["outcome"] for line in lines[1:]] == [
        "error",
        "tool_error",
        "complete",
    ]
    assert json.loads(lines[1])["code"] == -32602
    assert json.loads(lines[3])["item"] == "files://report"
    text = "\n".join(lines)
    for secret in ("s3cret", "hunter2", "abc123", "welcome"):
        assert secret not in text


@synchronous
async def test_a_legacy_sessions_rounds_are_logged_without_its_session_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = served(Logging())
    peer = LegacyPeer(server)
    with caplog.at_level(logging.INFO, logger="snodo.requests"):
        await peer.initialize()
        await peer.call("login", user="ada", password="x")
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "snodo.requests"]
    assert [line["method"] for line in lines] == ["server/discover", "tools/call"]
    assert all(peer.session.id not in json.dumps(line) for line in lines)


@synchronous
async def test_a_quiet_logger_costs_no_record(caplog: pytest.LogCaptureFixture) -> None:
    server = served(Logging(level=logging.DEBUG))
    with caplog.at_level(logging.INFO, logger="snodo.requests"):
        await call(server, "login", user="a", password="b")
    assert [r for r in caplog.records if r.name == "snodo.requests"] == []
