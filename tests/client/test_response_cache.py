"""The client's response cache (server/utilities/caching.mdx): what it keeps, for how
long, for whom, and what makes it stale; against a scripted transport for the exact
wire, and a real ``snodo run`` HTTP server for the whole path."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import pytest

from snodo.client import Client, Listed, RequestError, ResponseCache
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

TOOLS = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
ORIGIN = "http://example.test/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def kept(ttl: Any, scope: str | None = "public", **more: Any) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "complete", **TOOLS, **more}
    if ttl is not None:
        result["ttlMs"] = ttl
    if scope is not None:
        result["cacheScope"] = scope
    return result


def test_a_result_is_fresh_for_its_ttl_then_gone() -> None:
    clock = Clock()
    cache = ResponseCache(clock=clock)
    cache.put(ORIGIN, "me", "tools/list", {}, kept(1500))
    assert cache.get(ORIGIN, "me", "tools/list", {}) == kept(1500)
    clock.now += 1.499
    assert cache.get(ORIGIN, "me", "tools/list", {}) is not None
    clock.now += 0.001
    assert cache.get(ORIGIN, "me", "tools/list", {}) is None
    assert len(cache) == 0, "a stale entry is dropped when found stale"


@pytest.mark.parametrize("ttl", [None, 0, 0.0, -5, True, "600"])
def test_no_positive_ttl_means_never_kept(ttl: Any) -> None:
    cache = ResponseCache()
    cache.put(ORIGIN, "me", "tools/list", {}, kept(ttl))
    assert len(cache) == 0


def test_what_may_never_be_kept() -> None:
    cache = ResponseCache()
    cache.put(ORIGIN, "me", "tools/call", {"name": "a"}, kept(60_000))
    cache.put(ORIGIN, "me", "resources/read", {"uri": "x://1", "requestState": "s"}, kept(60_000))
    cache.put(ORIGIN, "me", "resources/read", {"uri": "x://1", "inputResponses": {}}, kept(60_000))
    cache.put(ORIGIN, "me", "resources/read", {"uri": "x://1"}, {"resultType": "input_required"})
    assert len(cache) == 0
    cache.put(ORIGIN, "me", "resources/read", {"uri": "x://1"}, kept(60_000))
    retry = {"uri": "x://1", "inputResponses": {"k": {}}}
    assert cache.get(ORIGIN, "me", "resources/read", retry) is None, "a retry is never served"


def test_the_key_is_method_params_and_origin_but_not_meta() -> None:
    cache = ResponseCache()
    cache.put(ORIGIN, "me", "resources/read", {"uri": "x://1"}, kept(60_000, text="one"))
    meta = {"uri": "x://1", "_meta": {"progressToken": "t", "logLevel": "debug"}}
    assert cache.get(ORIGIN, "me", "resources/read", meta)["text"] == "one"
    assert cache.get(ORIGIN, "me", "resources/read", {"uri": "x://2"}) is None
    assert cache.get(ORIGIN, "me", "prompts/list", {"uri": "x://1"}) is None
    assert cache.get("http://other.test/mcp", "me", "resources/read", {"uri": "x://1"}) is None
    cache.put(ORIGIN, "me", "tools/list", {}, kept(60_000))
    assert cache.get(ORIGIN, "me", "tools/list", {"cursor": "c"}) is None


def test_private_results_stay_with_their_principal_public_ones_do_not() -> None:
    cache = ResponseCache()
    cache.put(ORIGIN, "alice", "resources/read", {"uri": "x://p"}, kept(60_000, "private"))
    cache.put(ORIGIN, "alice", "resources/read", {"uri": "x://u"}, kept(60_000, None))
    cache.put(ORIGIN, "alice", "resources/read", {"uri": "x://s"}, kept(60_000, "public"))
    for uri in ("x://p", "x://u"):
        assert cache.get(ORIGIN, "alice", "resources/read", {"uri": uri}) is not None
        assert cache.get(ORIGIN, "bob", "resources/read", {"uri": uri}) is None, uri
    assert cache.get(ORIGIN, "bob", "resources/read", {"uri": "x://s"}) is not None
    # A result that turns private replaces the public one: no one else is served it.
    cache.put(ORIGIN, "alice", "resources/read", {"uri": "x://s"}, kept(60_000, "private"))
    assert cache.get(ORIGIN, "bob", "resources/read", {"uri": "x://s"}) is None
    assert cache.get(ORIGIN, "alice", "resources/read", {"uri": "x://s"}) is not None


def test_bounded_by_entries_and_bytes_least_recently_used_first() -> None:
    cache = ResponseCache(max_entries=2)
    for uri in ("x://1", "x://2"):
        cache.put(ORIGIN, "me", "resources/read", {"uri": uri}, kept(60_000))
    assert cache.get(ORIGIN, "me", "resources/read", {"uri": "x://1"}) is not None
    cache.put(ORIGIN, "me", "resources/read", {"uri": "x://3"}, kept(60_000))
    assert cache.get(ORIGIN, "me", "resources/read", {"uri": "x://2"}) is None, "least recent"
    assert cache.get(ORIGIN, "me", "resources/read", {"uri": "x://1"}) is not None
    one = len(json.dumps(kept(60_000, text="y" * 60), separators=(",", ":")))
    small = ResponseCache(max_bytes=2 * one + 10)
    small.put(ORIGIN, "me", "resources/read", {"uri": "big"}, kept(60_000, text="x" * 3 * one))
    assert len(small) == 0, "a result larger than the whole cache is not kept"
    for uri in ("x://1", "x://2", "x://3"):
        small.put(ORIGIN, "me", "resources/read", {"uri": uri}, kept(60_000, text="y" * 60))
    assert len(small) == 2


def test_notifications_make_stale_what_they_name() -> None:
    cache = ResponseCache()
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        cache.put(ORIGIN, "me", method, {}, kept(60_000))
    for uri in ("x://1", "x://2"):
        cache.put(ORIGIN, "me", "resources/read", {"uri": uri}, kept(60_000))
    cache.put("http://other.test/mcp", "me", "tools/list", {}, kept(60_000))
    cache.notified(ORIGIN, {"method": "notifications/tools/list_changed"})
    assert cache.get(ORIGIN, "me", "tools/list", {}) is None
    assert cache.get("http://other.test/mcp", "me", "tools/list", {}) is not None
    cache.notified(ORIGIN, {"method": "notifications/resources/list_changed"})
    assert cache.get(ORIGIN, "me", "resources/templates/list", {}) is None
    assert cache.get(ORIGIN, "me", "prompts/list", {}) is not None
    updated = {"method": "notifications/resources/updated", "params": {"uri": "x://2"}}
    cache.notified(ORIGIN, updated)
    assert cache.get(ORIGIN, "me", "resources/read", {"uri": "x://2"}) is None
    assert cache.get(ORIGIN, "me", "resources/read", {"uri": "x://1"}) is not None
    cache.notified(ORIGIN, {"method": "notifications/message", "params": {"uri": "x://1"}})
    assert len(cache) == 3


def test_a_hit_is_a_copy_the_caller_may_change() -> None:
    cache = ResponseCache()
    cache.put(ORIGIN, "me", "tools/list", {}, kept(60_000))
    cache.get(ORIGIN, "me", "tools/list", {})["tools"].clear()  # type: ignore[index]
    assert cache.get(ORIGIN, "me", "tools/list", {})["tools"] == TOOLS["tools"]  # type: ignore[index]


class Scripted:
    """Answers each request with the next scripted result or error; keeps what was sent."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.sent: list[dict[str, Any]] = []
        self.url = ORIGIN

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: Any
    ) -> dict[str, Any]:
        self.sent.append(message)
        answer = self.answers.pop(0)
        key = "error" if "code" in answer else "result"
        return {"jsonrpc": "2.0", "id": message["id"], key: answer}

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        yield {}

    async def close(self) -> None:
        return None


def page(name: str, ttl: int, scope: str = "public", cursor: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "resultType": "complete",
        "tools": [{"name": name, "inputSchema": {"type": "object"}}],
        "ttlMs": ttl,
        "cacheScope": scope,
    }
    if cursor is not None:
        result["nextCursor"] = cursor
    return result


def test_listings_keep_their_hints_and_restart_when_a_kept_cursor_is_refused() -> None:
    refused = {"code": -32602, "message": "Invalid params: cursor"}
    transport = Scripted(
        page("a", 60_000, cursor="c1"),
        page("b", 0, "private"),
        refused,
        page("a2", 60_000, cursor="c9"),
        page("b2", 0),
    )

    async def main() -> None:
        client = Client(transport, era="modern")
        first = await client.list_tools()
        assert isinstance(first, Listed)
        assert ([t.name for t in first], first.ttl_ms, first.cache_scope) == (
            ["a", "b"],
            0,
            "private",
        )
        second = await client.list_tools()
        assert [t.name for t in second] == ["a2", "b2"]
        assert (second.ttl_ms, second.cache_scope) == (0, "public")

    asyncio.run(main())
    sent = [m["params"].get("cursor") for m in transport.sent]
    assert sent == [None, "c1", "c1", None, "c9"], "page 1 came from the cache, then afresh"


def test_a_refused_cursor_with_no_kept_page_is_the_callers() -> None:
    transport = Scripted(page("a", 0, cursor="c1"), {"code": -32602, "message": "cursor"})

    async def main() -> None:
        with pytest.raises(RequestError):
            await Client(transport, era="modern").list_tools()

    asyncio.run(main())
    assert len(transport.sent) == 2


def test_mrtr_rounds_and_their_result_are_never_kept() -> None:
    ask = {
        "resultType": "input_required",
        "inputRequests": {"q": {"method": "roots/list", "params": {}}},
        "requestState": "s",
    }
    done = {"resultType": "complete", "contents": [], "ttlMs": 60_000, "cacheScope": "public"}
    transport = Scripted(ask, done, ask, done)

    async def roots(params: Any) -> dict[str, Any]:
        return {"roots": []}

    async def main() -> None:
        client = Client(transport, era="modern", roots=roots)
        await client.read_resource("x://asks")
        await client.read_resource("x://asks")

    asyncio.run(main())
    assert len(transport.sent) == 4


def test_cache_false_sends_every_request() -> None:
    transport = Scripted(page("a", 60_000), page("a", 60_000))

    async def main() -> None:
        client = Client(transport, era="modern", cache=False)
        await client.list_tools()
        await client.list_tools()

    asyncio.run(main())
    assert len(transport.sent) == 2


TARGET = f"{ROOT / 'tests' / 'client' / 'cached_server.py'}:server"


def text(result: Any) -> str:
    return str(result.contents[0].text)


def test_against_a_real_server_hints_scopes_and_notifications() -> None:
    async def scenario(url: str) -> None:
        shared = ResponseCache()
        alice = Client.http(url, cache=shared, principal="alice")
        bob = Client.http(url, cache=shared, principal="bob")
        alice_again = Client.http(url, cache=shared, principal="alice")
        async with alice, bob, alice_again:
            listed = await alice.list_tools()
            assert (listed.ttl_ms, listed.cache_scope) == (60_000, "public")
            # Private reads: one per principal; a public read serves everyone.
            assert text(await alice.read_resource("count://mine")) == "1"
            assert text(await alice.read_resource("count://mine")) == "1"
            assert text(await bob.read_resource("count://mine")) == "2"
            assert text(await alice_again.read_resource("count://mine")) == "1"
            assert text(await alice.read_resource("count://shared")) == "1"
            assert text(await bob.read_resource("count://shared")) == "1"
            # A change no notification told this client about: the kept list stands.
            await bob.call_tool("add_tool", {"name": "quiet"})
            assert "quiet" not in [t.name for t in await alice.list_tools()]
            # Listening, the list-changed notification makes it stale at once.
            listening = alice.listen(toolsListChanged=True, resourceSubscriptions=["count://mine"])
            async with contextlib.aclosing(listening) as stream:  # type: ignore[type-var]
                await anext(stream)  # acknowledged
                await bob.call_tool("add_tool", {"name": "loud"})
                note = await asyncio.wait_for(anext(stream), 10)
                assert note["method"] == "notifications/tools/list_changed"
                names = [t.name for t in await alice.list_tools()]
                assert {"quiet", "loud"} <= set(names)
                await bob.call_tool("touch", {"uri": "count://mine"})
                note = await asyncio.wait_for(anext(stream), 10)
                assert note["method"] == "notifications/resources/updated"
            assert text(await alice.read_resource("count://mine")) == "3"
            assert text(await alice_again.read_resource("count://mine")) == "3"

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 60))


def test_discover_is_kept_but_ping_always_asks_the_server() -> None:
    discovered = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"},
        "ttlMs": 60_000,
        "cacheScope": "public",
    }
    transport = Scripted(discovered, discovered, discovered)

    async def main() -> None:
        client = Client(transport, era="modern")
        await client.discover()
        await client.discover()
        await client.ping()
        await client.ping()

    asyncio.run(main())
    assert [m["method"] for m in transport.sent] == ["server/discover"] * 3
