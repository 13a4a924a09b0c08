"""``ctx.user_state``: each caller's own values across requests, by principal, by legacy
session, for the one local client; bounded; shared by two servers through Redis or an
SQLite file; and nothing for an anonymous modern request over HTTP."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from snodo.core.context import Context
from snodo.server import Server, UserStore
from snodo.server.callers import LEGACY_SESSION, NoCaller, UserStateFull, caller_of
from snodo.stores.key_value import MemoryStore, RedisStore
from tests.middleware.support import LegacyPeer, synchronous
from tests.support.wire import request


def counter(users: UserStore | str | None = None) -> Server:
    server = Server("counter", "1.0.0", user_store=users)

    @server.tool
    async def count(ctx: Context, by: int = 1) -> str:
        """Add to this caller's count."""
        total = await ctx.user_state.get("count", 0) + by
        await ctx.user_state.set("count", total)
        return str(total)

    @server.tool
    async def forget(ctx: Context) -> list[str]:
        """Forget this caller's count; what it held before."""
        held = await ctx.user_state.keys()
        await ctx.user_state.clear()
        return held

    @server.tool
    async def keep(ctx: Context, key: str, value: Any) -> str:
        await ctx.user_state.set(key, value)
        return "kept"

    return server


async def counted(server: Server, principal: str | None = None, **options: Any) -> str:
    reply = await server.handle(
        request("tools/call", {"name": "count", "arguments": {}}), principal=principal, **options
    )
    assert reply.response is not None
    result = reply.response["result"]
    return str(result["content"][0]["text"])


@synchronous
async def test_each_principal_counts_its_own() -> None:
    server = counter()
    assert [await counted(server, "alice") for _ in range(3)] == ["1", "2", "3"]
    assert await counted(server, "bob") == "1"
    assert await counted(server) == "1"  # in memory: the one local client
    assert await counted(server) == "2"


@synchronous
async def test_anonymous_legacy_sessions_count_apart() -> None:
    server = counter()
    first, second = LegacyPeer(server), LegacyPeer(server)
    for peer in (first, second):
        await peer.initialize()
    texts = []
    for peer in (first, first, second):
        texts.append((await peer.call("count"))["result"]["content"][0]["text"])
    assert texts == ["1", "2", "1"]
    signed_in = LegacyPeer(server, principal="carol")  # a principal's, whatever session
    await signed_in.initialize()
    await signed_in.call("count")
    assert await counted(server, "carol") == "2"


@synchronous
async def test_an_anonymous_modern_request_over_http_has_none() -> None:
    server = counter()
    reply = await server.handle(
        request("tools/call", {"name": "count", "arguments": {}}), transport="http"
    )
    assert reply.response is not None
    result = reply.response["result"]
    assert result["isError"] is True
    assert "no principal" in result["content"][0]["text"]
    ctx = Context(
        request_id=1,
        request_method="x",
        request_params={},
        protocol_version="v",
        client_capabilities={},
        transport="http",
    )
    with pytest.raises(NoCaller):
        server.caller_space.user_state(ctx)
    with pytest.raises(RuntimeError, match="not made by a server"):
        _ = ctx.user_state


def test_who_a_caller_is() -> None:
    def ctx(principal: str | None, transport: str) -> Context:
        return Context(
            request_id=1,
            request_method="tools/call",
            request_params={},
            protocol_version="v",
            client_capabilities={},
            principal=principal,
            transport=transport,
        )

    assert caller_of(ctx("ada", "http")) == "p:ada"
    assert caller_of(ctx(None, "stdio")) == "local"
    assert caller_of(ctx(None, "http")) is None
    token = LEGACY_SESSION.set("sess-1")
    try:
        assert caller_of(ctx(None, "http")) == "s:sess-1"
        assert caller_of(ctx("ada", "http")) == "p:ada"
    finally:
        LEGACY_SESSION.reset(token)


@synchronous
async def test_the_bounds_hold() -> None:
    clock = [0.0]
    store = MemoryStore(clock=lambda: clock[0])
    server = counter(UserStore(store, ttl=60, max_keys=2, max_value_bytes=20))
    await counted(server, "ada")
    big = await server.handle(
        request("tools/call", {"name": "keep", "arguments": {"key": "k", "value": "x" * 40}}),
        principal="ada",
    )
    assert big.response is not None
    assert "past 20" in big.response["result"]["content"][0]["text"]
    await server.handle(
        request("tools/call", {"name": "keep", "arguments": {"key": "a", "value": 1}}),
        principal="ada",
    )
    full = await server.handle(
        request("tools/call", {"name": "keep", "arguments": {"key": "b", "value": 1}}),
        principal="ada",
    )
    assert full.response is not None
    assert "at most 2 keys" in full.response["result"]["content"][0]["text"]
    clock[0] = 61.0  # every key expired: the count starts again
    assert await counted(server, "ada") == "1"
    with pytest.raises(ValueError, match="positive"):
        UserStore(max_keys=0)
    assert issubclass(UserStateFull, ValueError)


@synchronous
async def test_clear_and_keys() -> None:
    server = counter()
    await counted(server, "ada")
    forgot = await server.handle(
        request("tools/call", {"name": "forget", "arguments": {}}), principal="ada"
    )
    assert forgot.response is not None
    assert forgot.response["result"]["structuredContent"] == {"result": ["count"]}
    assert await counted(server, "ada") == "1"


async def _two_workers(make: Any) -> None:
    first, second = counter(make()), counter(make())
    assert await counted(first, "ada") == "1"
    assert await counted(second, "ada") == "2"
    assert await counted(first, "ada") == "3"


@synchronous
async def test_two_servers_share_redis(redis_url: str) -> None:
    prefix = f"test:{secrets.token_hex(4)}:"
    made: list[RedisStore] = []

    def make() -> UserStore:
        made.append(RedisStore(redis_url, prefix=prefix))
        return UserStore(made[-1])

    await _two_workers(make)
    for store in made:
        await store.aclose()


@synchronous
async def test_two_servers_share_an_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'users.db'}"
    await _two_workers(lambda: url)
