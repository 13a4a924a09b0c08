"""Visibility in every method and both eras: ``enabled=False``, server rules by names,
tags and predicates, each caller's own rules (kept in the server's store, so a second
worker on the same Redis agrees), and the list changes each sends."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest

from snodo import Context, Server
from snodo.search import ToolSearch
from snodo.server import UserStore
from snodo.stores.key_value import RedisStore
from tests.middleware.support import LegacyPeer, ask, synchronous
from tests.search.catalog import catalog_server
from tests.search.test_serving import result, searched
from tests.support.wire import request


def offered(**options: Any) -> Server:
    """One item of every kind, each tagged; ``secret`` starts hidden."""
    server = Server("offered", "1.0.0", **options)

    @server.tool(tags={"ops"}, inline=True)
    def restart() -> str:
        return "restarted"

    @server.tool(enabled=False, inline=True)
    def secret() -> str:
        return "hidden"

    @server.tool(inline=True)
    async def hide_ops(ctx: Context) -> str:
        await ctx.disable(tags="ops")
        return "hidden for you"

    @server.tool(inline=True)
    async def show_secret(ctx: Context) -> str:
        await ctx.enable(names="secret", kinds=["tools"])
        return "shown for you"

    @server.tool(inline=True)
    async def as_before(ctx: Context) -> str:
        await ctx.reset_visibility()
        return "as before"

    @server.prompt(tags={"ops"})
    def runbook(service: str) -> str:
        return f"restart {service}"

    @server.resource("file:///ops/log", tags={"ops"})
    def log() -> str:
        return "log"

    @server.resource_template("file:///ops/{name}", tags={"ops"})
    def ops_file(name: str) -> str:
        return name

    @server.completion("ref/prompt", "runbook")
    def services(argument: str, value: str) -> list[str]:
        return ["db", "web"]

    return server


async def names(server: Server, **options: Any) -> list[str]:
    found = await ask(server, "tools/list", **options)
    return [tool["name"] for tool in found["result"]["tools"]]


def missing(response: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = response["error"]
    return error


@synchronous
async def test_a_hidden_item_answers_as_a_missing_one_in_every_method() -> None:
    server = offered()
    assert "secret" not in await names(server)
    hidden = await ask(server, "tools/call", {"name": "secret", "arguments": {}})
    assert missing(hidden) == {"code": -32602, "message": "Unknown tool: secret"}
    server.disable(tags="ops")
    assert await names(server) == ["hide_ops", "show_secret", "as_before"]
    assert missing(await ask(server, "prompts/get", {"name": "runbook"}))["code"] == -32602
    assert (await ask(server, "prompts/list"))["result"]["prompts"] == []
    read = await ask(server, "resources/read", {"uri": "file:///ops/log"})
    absent = await ask(server, "resources/read", {"uri": "file:///elsewhere"})
    assert json.dumps(missing(read)) == json.dumps(missing(absent)).replace("elsewhere", "ops/log")
    templated = await ask(server, "resources/read", {"uri": "file:///ops/notes"})
    assert missing(templated)["code"] == missing(absent)["code"]
    completed = await ask(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "runbook"},
            "argument": {"name": "service", "value": ""},
        },
    )
    assert missing(completed) == {"code": -32602, "message": "Unknown prompt: runbook"}
    server.enable(where=lambda item: item.kind == "prompts")
    assert [p["name"] for p in (await ask(server, "prompts/list"))["result"]["prompts"]] == [
        "runbook"
    ]
    assert (await ask(server, "resources/list"))["result"]["resources"] == []


@synchronous
async def test_a_legacy_session_sees_the_same_and_hears_the_change() -> None:
    server = offered()
    peer = LegacyPeer(server)
    await peer.initialize()
    listed = await peer.ask("tools/list")
    assert [tool["name"] for tool in listed["result"]["tools"]] == [
        "restart",
        "hide_ops",
        "show_secret",
        "as_before",
    ]
    assert (await peer.call("secret"))["error"]["code"] == -32602
    before = len(peer.notes)
    server.enable(names="secret")
    assert {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} in [
        {key: note[key] for key in ("jsonrpc", "method")} for note in peer.notes[before:]
    ]
    assert (await peer.call("secret"))["result"]["content"][0]["text"] == "hidden"


@synchronous
async def test_each_caller_changes_what_it_alone_sees() -> None:
    server = offered()
    assert (await ask(server, "tools/call", {"name": "hide_ops"}, principal="ada"))["result"]
    ada = await ask(server, "tools/list", principal="ada")
    assert [t["name"] for t in ada["result"]["tools"]] == ["hide_ops", "show_secret", "as_before"]
    assert ada["result"]["cacheScope"] == "private"
    assert "restart" in await names(server, principal="bob")
    call = await ask(server, "tools/call", {"name": "restart"}, principal="ada")
    assert missing(call) == {"code": -32602, "message": "Unknown tool: restart"}
    await ask(server, "tools/call", {"name": "show_secret"}, principal="ada")
    assert "secret" in await names(server, principal="ada")
    assert "secret" not in await names(server, principal="bob")
    await ask(server, "tools/call", {"name": "as_before"}, principal="ada")
    assert await names(server, principal="ada") == await names(server, principal="bob")


@synchronous
async def test_anonymous_legacy_sessions_keep_their_own_rules() -> None:
    server = offered()
    first, second = LegacyPeer(server), LegacyPeer(server)
    for peer in (first, second):
        await peer.initialize()
    await first.call("hide_ops")
    assert (await first.call("restart"))["error"]["code"] == -32602
    assert (await second.call("restart"))["result"]["content"][0]["text"] == "restarted"


@synchronous
async def test_two_workers_on_one_redis_agree_on_a_callers_rules(redis_url: str) -> None:
    prefix = f"test:{secrets.token_hex(4)}:"
    stores = [RedisStore(redis_url, prefix=prefix) for _ in range(2)]
    a, b = (offered(user_store=UserStore(store)) for store in stores)
    try:
        await ask(a, "tools/call", {"name": "hide_ops"}, principal="ada")
        assert "restart" not in await names(b, principal="ada")
        assert "restart" in await names(b, principal="bob")
        await ask(b, "tools/call", {"name": "as_before"}, principal="ada")
        assert "restart" in await names(a, principal="ada")
    finally:
        for store in stores:
            await store.aclose()


@synchronous
async def test_an_anonymous_http_request_keeps_no_rules() -> None:
    server = offered()
    found = await server.handle(
        request("tools/call", {"name": "hide_ops", "arguments": {}}), transport="http"
    )
    assert found.response is not None
    assert found.response["result"]["isError"] is True


def test_what_does_not_select_is_refused() -> None:
    server = offered()
    with pytest.raises(ValueError, match="say which items"):
        server.disable()
    with pytest.raises(ValueError, match="kinds are among"):
        server.enable(names="x", kinds=["widgets"])
    with pytest.raises(TypeError, match="visible="):
        server.tool(name="x", visible=True)(lambda: "x")  # type: ignore[arg-type]


def test_tool_search_never_finds_a_hidden_tool() -> None:
    server = catalog_server(ToolSearch())
    query = "send an email to dana@acme.com"
    assert searched(server, query)[0] == "send_email"
    server.disable(names="send_email")
    assert "send_email" not in searched(server, query)
    through = result(
        server,
        "tools/call",
        {"name": "call_tool", "arguments": {"name": "send_email", "arguments": {}}},
    )
    assert through["isError"] is True
    assert "Unknown tool: send_email" in through["content"][0]["text"]


@synchronous
async def test_a_hook_hides_in_every_method_as_the_rules_do() -> None:
    server = offered()
    seen: list[tuple[str, str]] = []

    def hook(ctx: Context, kind: str, key: str) -> bool:
        seen.append((kind, key))
        hidden = ("restart", "runbook", "file:///ops/log", "file:///ops/{name}")
        return key in hidden and ctx.principal != "ada"

    server.registry.visibility.add_hook(hook)
    bob = await ask(server, "tools/list", principal="bob")
    assert "restart" not in [t["name"] for t in bob["result"]["tools"]]
    assert bob["result"]["cacheScope"] == "private"
    assert "restart" in await names(server, principal="ada")
    call = await ask(server, "tools/call", {"name": "restart"}, principal="bob")
    assert missing(call) == {"code": -32602, "message": "Unknown tool: restart"}
    got = await ask(server, "prompts/get", {"name": "runbook"}, principal="bob")
    assert missing(got) == {"code": -32602, "message": "Unknown prompt: runbook"}
    read = await ask(server, "resources/read", {"uri": "file:///ops/log"}, principal="bob")
    assert read["error"]["code"] == -32602
    assert ("tools", "restart") in seen
