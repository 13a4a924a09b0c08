"""``ResponseCache``: which answers are kept, for whom, what clears them, and a cache two
servers share through Redis or an SQLite file."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.gateway import proxy
from snodo.middleware import ResponseCache
from snodo.server import Server
from snodo.stores.key_value import RedisStore, SQLiteStore
from tests.middleware.support import LegacyPeer, ask, call, synchronous
from tests.support.wire import request

READ_ONLY = {"readOnlyHint": True}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Which?",
        "requestedSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
    },
}


def cached(cache: ResponseCache | None = None, *, bare: bool = False) -> tuple[Server, list[str]]:
    ran: list[str] = []
    server = Server("cached", "1.0.0", middleware=[] if bare else [cache or ResponseCache()])

    @server.tool(inline=True, annotations=READ_ONLY)
    def lookup(key: str) -> str:
        ran.append(f"lookup {key}")
        return f"value of {key}"

    @server.tool(inline=True)
    def bump(key: str) -> str:
        ran.append(f"bump {key}")
        return "bumped"

    @server.tool(inline=True, annotations=READ_ONLY)
    def broken() -> str:
        ran.append("broken")
        raise RuntimeError("down")

    @server.tool(inline=True, annotations=READ_ONLY)
    def asks(ctx: Context) -> Any:
        ran.append("asks")
        return input_required({"x": ELICIT})

    @server.resource("notes://today", inline=True)
    def today() -> str:
        ran.append("read today")
        return "sunny"

    return server, ran


async def as_principal(server: Server, principal: str, name: str, **arguments: Any) -> Any:
    reply = await server.handle(
        request("tools/call", {"name": name, "arguments": arguments}), principal=principal
    )
    assert reply.response is not None
    return reply.response


@synchronous
async def test_a_read_only_call_runs_once_per_principal_and_arguments() -> None:
    server, ran = cached()
    first = await as_principal(server, "alice", "lookup", key="a")
    again = await as_principal(server, "alice", "lookup", key="a")
    assert again == first
    assert again["result"]["content"] == [{"type": "text", "text": "value of a"}]
    await as_principal(server, "bob", "lookup", key="a")  # another principal's runs
    await as_principal(server, "alice", "lookup", key="b")  # other arguments run
    assert ran == ["lookup a", "lookup a", "lookup b"]


@synchronous
async def test_a_tool_that_is_not_read_only_always_runs() -> None:
    server, ran = cached()
    for _ in range(3):
        assert "result" in await call(server, "bump", key="k")
    assert ran == ["bump k"] * 3


@synchronous
async def test_errors_and_questions_are_never_kept() -> None:
    server, ran = cached()
    for _ in range(2):
        assert (await call(server, "broken"))["result"]["isError"] is True
        asked = request("tools/call", {"name": "asks"}, capabilities={"elicitation": {}})
        reply = await server.handle(asked)
        assert reply.response is not None
        assert reply.response["result"]["resultType"] == "input_required"
        assert "error" in await call(server, "missing")
    assert ran == ["broken", "asks"] * 2


@synchronous
async def test_a_list_is_kept_until_its_list_changes() -> None:
    server, ran = cached()
    listed = await ask(server, "tools/list")
    del ran[:]

    @server.tool(inline=True)
    def added() -> str:
        return ""

    relisted = await ask(server, "tools/list")
    names = [tool["name"] for tool in relisted["result"]["tools"]]
    assert "added" in names and len(names) == len(listed["result"]["tools"]) + 1
    # The calls of tools are cleared with their list.
    await call(server, "lookup", key="z")
    server.notify_list_changed("tools")
    await call(server, "lookup", key="z")
    assert ran == ["lookup z", "lookup z"]


@synchronous
async def test_a_read_is_kept_until_the_resource_is_updated() -> None:
    server, ran = cached()
    for _ in range(2):
        read = await ask(server, "resources/read", {"uri": "notes://today"})
        assert read["result"]["contents"][0]["text"] == "sunny"
    server.notify_resource_updated("notes://today")
    await ask(server, "resources/read", {"uri": "notes://today"})
    server.notify_resource_updated("notes://elsewhere")  # another resource: kept still
    await ask(server, "resources/read", {"uri": "notes://today"})
    assert ran == ["read today", "read today"]


@synchronous
async def test_legacy_sessions_of_anonymous_clients_keep_their_own() -> None:
    server, ran = cached()
    first, second = LegacyPeer(server), LegacyPeer(server)
    for peer in (first, second):
        await peer.initialize()
        for _ in range(2):
            assert (await peer.call("lookup", key="s"))["result"]["content"][0]["text"] == (
                "value of s"
            )
    assert ran == ["lookup s", "lookup s"]


@synchronous
async def test_a_backends_read_only_tools_are_known_from_its_list() -> None:
    backend, ran = cached(bare=True)
    cache = ResponseCache()
    front = proxy(lambda **options: Client(MemoryTransport(backend), **options), middleware=[cache])
    await front.startup()
    try:
        await call(front, "lookup", key="p")  # not listed yet: not known read-only
        await ask(front, "tools/list")
        for _ in range(3):
            await call(front, "lookup", key="p")
            await call(front, "bump", key="p")
    finally:
        await front.shutdown()
    assert ran == ["lookup p", "lookup p", "bump p", "bump p", "bump p"]
    assert cache.hits == 2


async def _shared(store_of: Any) -> None:
    stores = [store_of(), store_of()]
    caches = [ResponseCache(store=store) for store in stores]
    pairs = [cached(cache) for cache in caches]
    for cache in caches:  # registering cleared the lists: in the background, done now
        await cache.cleared()
    for number in range(4):
        server, _ = pairs[number % 2]
        response = await as_principal(server, "alice", "lookup", key="shared")
        assert response["result"]["content"][0]["text"] == "value of shared"
    assert sum(len(ran) for _, ran in pairs) == 1
    pairs[1][0].notify_list_changed("tools")  # heard by this one alone (no bus here)
    await as_principal(pairs[1][0], "alice", "lookup", key="shared")
    assert sum(len(ran) for _, ran in pairs) == 2
    for server, _ in pairs:
        await server.shutdown()


@synchronous
async def test_two_servers_share_a_redis_cache(redis_url: str) -> None:
    prefix = f"test:{secrets.token_hex(4)}:"
    made: list[RedisStore] = []

    def store() -> RedisStore:
        made.append(RedisStore(redis_url, prefix=prefix))
        return made[-1]

    await _shared(store)


@synchronous
async def test_two_servers_share_an_sqlite_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    made: list[SQLiteStore] = []

    def store() -> SQLiteStore:
        made.append(SQLiteStore(path))
        return made[-1]

    await _shared(store)
    for each in made:
        each.close()


def test_one_cache_serves_one_server() -> None:
    cache = ResponseCache()
    Server("one", "1", middleware=[cache])
    with pytest.raises(ValueError, match="one server"):
        Server("two", "1", middleware=[cache])
