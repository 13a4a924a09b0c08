"""``RateLimit``: the budget per caller, the refusal on the wire in both eras and over
HTTP, in front of a proxy's backend, and one budget shared by two servers through a real
redis-server."""

from __future__ import annotations

import logging
import secrets
from typing import Any

import httpx
import pytest

from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.gateway import proxy
from snodo.middleware import RateLimit
from snodo.server import Server
from snodo.stores.buckets import MemoryBuckets, RedisBuckets
from snodo.transports.http import HttpApp
from tests.middleware.support import LegacyPeer, ask, call, synchronous
from tests.support.wire import VERSION, request


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limited(limit: RateLimit) -> tuple[Server, list[str]]:
    ran: list[str] = []
    server = Server("limited", "1.0.0", middleware=[limit])

    @server.tool(inline=True)
    def echo(text: str) -> str:
        ran.append(text)
        return text

    @server.tool(inline=True)
    def other() -> str:
        ran.append("other")
        return "other"

    return server, ran


def refusal(ms: int) -> dict[str, Any]:
    return {
        "code": -32000,
        "message": f"Rate limited: try again in {ms / 1000:g} s",
        "data": {"retryAfterMs": ms},
    }


@synchronous
async def test_a_burst_then_the_rate_and_a_refusal_costs_nothing() -> None:
    clock = Clock()
    server, ran = limited(RateLimit(2, 1.0, burst=3, store=MemoryBuckets(clock=clock)))
    for n in range(3):
        assert "result" in await call(server, "echo", text=str(n))
    assert await call(server, "echo", text="4th") == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": refusal(500),
    }
    clock.now += 0.25  # half a token: the refused call took none
    assert (await call(server, "echo", text="5th"))["error"] == refusal(250)
    clock.now += 0.25
    assert "result" in await call(server, "echo", text="6th")
    assert ran == ["0", "1", "2", "6th"]


@synchronous
async def test_each_principal_has_its_own_budget() -> None:
    clock = Clock()
    server, ran = limited(RateLimit(1, 60.0, store=MemoryBuckets(clock=clock)))
    message = request("tools/call", {"name": "echo", "arguments": {"text": "a"}})
    first = await server.handle(message, principal="alice")
    second = await server.handle(message, principal="alice")
    other = await server.handle(message, principal="bob")
    assert first.response is not None and "result" in first.response
    assert second.response is not None and second.response["error"]["code"] == -32000
    assert other.response is not None and "result" in other.response
    assert ran == ["a", "a"]


@synchronous
async def test_only_the_named_tools_count() -> None:
    server, ran = limited(RateLimit(1, 60.0, tools=["echo"]))
    assert "result" in await call(server, "echo", text="x")
    assert "error" in await call(server, "echo", text="y")
    for _ in range(3):  # neither another tool nor a list counts
        assert "result" in await call(server, "other")
        assert "result" in await ask(server, "tools/list")
    assert ran == ["x", "other", "other", "other"]


@synchronous
async def test_a_key_function_chooses_who_counts() -> None:
    def tenant(ctx: Any) -> str | None:
        arguments = ctx.request_params.get("arguments") or {}
        text = arguments.get("text")
        return None if text == "free" else str(text)[:1]

    server, _ = limited(RateLimit(1, 60.0, key=tenant))
    assert "result" in await call(server, "echo", text="a1")
    assert "error" in await call(server, "echo", text="a2")
    assert "result" in await call(server, "echo", text="b1")
    for _ in range(3):
        assert "result" in await call(server, "echo", text="free")


def test_the_settings_are_checked_where_written() -> None:
    with pytest.raises(ValueError, match="at least 1 call"):
        RateLimit(0)
    with pytest.raises(ValueError, match="burst"):
        RateLimit(1, burst=0)
    with pytest.raises(ValueError, match="key is"):
        RateLimit(1, key="session")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="memory: or redis://"):
        RateLimit(1, store="sqlite:/tmp/x")


def _post(name: str, text: str) -> tuple[dict[str, str], dict[str, Any]]:
    message = request("tools/call", {"name": name, "arguments": {"text": text}})
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }
    return headers, message


@synchronous
async def test_over_http_a_refusal_is_429_with_retry_after_and_addresses_count_apart() -> None:
    clock = Clock()
    server, ran = limited(RateLimit(1, 2.5, key="address", store=MemoryBuckets(clock=clock)))
    app = HttpApp(server)

    def client(address: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")

    async with client("10.0.0.1") as first, client("10.0.0.2") as second:
        headers, message = _post("echo", "one")
        admitted = await first.post("/mcp", json=message, headers=headers)
        refused = await first.post("/mcp", json=message, headers=headers)
        elsewhere = await second.post("/mcp", json=message, headers=headers)
    assert admitted.status_code == 200
    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "3"  # 2.5 s, in whole seconds up
    assert refused.json() == {"jsonrpc": "2.0", "id": 1, "error": refusal(2500)}
    assert elsewhere.status_code == 200
    assert ran == ["one", "one"]


@synchronous
async def test_a_legacy_session_is_refused_with_the_same_error() -> None:
    server, ran = limited(RateLimit(1, 60.0))
    peer = LegacyPeer(server)
    await peer.initialize()
    assert (await peer.call("echo", text="a"))["result"]["content"] == [
        {"type": "text", "text": "a"}
    ]
    response = await peer.call("echo", text="b")
    assert response["error"]["code"] == -32000
    assert response["error"]["message"].startswith("Rate limited: try again in ")
    assert set(response["error"]["data"]) == {"retryAfterMs"}
    assert ran == ["a"]


@synchronous
async def test_in_front_of_a_proxys_backend() -> None:
    backend, ran = limited(RateLimit(1000, 1.0))  # the backend's own limit never bites
    front = proxy(
        lambda **options: Client(MemoryTransport(backend), **options),
        middleware=[RateLimit(2, 60.0)],
    )
    await front.startup()
    try:
        answers = [await call(front, "echo", text=str(n)) for n in range(4)]
    finally:
        await front.shutdown()
    assert ["result" in a for a in answers] == [True, True, False, False]
    assert answers[2]["error"]["code"] == -32000
    assert ran == ["0", "1"]


@synchronous
async def test_two_servers_sharing_redis_hold_one_budget(redis_url: str) -> None:
    prefix = f"test:{secrets.token_hex(4)}:"
    servers = [
        limited(RateLimit(1, 600.0, burst=5, store=RedisBuckets(redis_url, prefix=prefix)))
        for _ in range(2)
    ]
    admitted = 0
    for n in range(20):
        server, _ = servers[n % 2]
        reply = await server.handle(
            request("tools/call", {"name": "echo", "arguments": {"text": "x"}}), principal="p"
        )
        assert reply.response is not None
        if "result" in reply.response:
            admitted += 1
        else:
            assert reply.response["error"]["data"]["retryAfterMs"] > 0
    assert admitted == 5
    assert sum(len(ran) for _, ran in servers) == 5
    for server, _ in servers:
        limit = server.middlewares[0]
        assert isinstance(limit, RateLimit) and isinstance(limit.buckets, RedisBuckets)
        await limit.buckets.aclose()


@synchronous
async def test_an_unreachable_shared_budget_admits_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    buckets = RedisBuckets("redis://127.0.0.1:1", timeout=0.5)
    server, ran = limited(RateLimit(1, 60.0, store=buckets))
    with caplog.at_level(logging.WARNING, logger="snodo.middleware"):
        for n in range(3):
            assert "result" in await call(server, "echo", text=str(n))
    assert ran == ["0", "1", "2"]
    warned = [r for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(warned) == 1
    await buckets.aclose()
