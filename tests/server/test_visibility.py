"""An extension's visibility rule (``snodo.server.extensions.VisibilityHook``, a hook of
the server's ``Visibility``), on the wire:
what it hides from a caller is left out of that caller's lists and answers every
request exactly as an item that does not exist; a list it may change by caller is
``private``; what it shows is served as if there were no rule."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo.core.context import Context
from snodo.search import ToolSearch
from snodo.server import CacheHint, Caching, Server
from snodo.server.extensions import Extension, Kind
from tests.middleware.support import LegacyPeer
from tests.search.test_serving import result as search_result
from tests.search.test_serving import searched
from tests.support.wire import request

SEES = "com.example/sees"
"""The extension a client declares to see the hidden items."""


class Secret:
    """Hides every item whose name or URI starts with ``secret`` from clients that do
    not declare ``SEES``."""

    def __init__(self) -> None:
        self.asked: list[Kind] = []

    def caller_dependent(self, kind: Kind) -> bool:
        self.asked.append(kind)
        return kind != "prompts"  # says so for the prompts' list: it stays shared

    def hides(self, ctx: Context, kind: Kind, key: str) -> bool:
        return key.startswith("secret") and not ctx.client_supports(SEES)


class Hiding(Extension):
    def __init__(self) -> None:
        super().__init__("com.example/hiding")
        self.rule = Secret()
        self.visibility = self.rule


SHARED = CacheHint(60_000, "public")
"""The server's own hint for its lists: what a list the rule does not vary keeps."""


def hiding_server() -> tuple[Server, Hiding]:
    server = Server("v", "1", caching=Caching(lists=SHARED))
    extension = Hiding()
    server.add_extension(extension)

    @server.tool
    def open_tool() -> str:
        return "open"

    @server.tool
    def secret_tool() -> str:
        return "secret"

    @server.prompt
    def secret_prompt() -> str:
        return "a secret prompt"

    @server.resource("secret://fixed")
    def fixed() -> str:
        return "the fixed resource"

    @server.resource_template("secret://{name}")
    def by_name(name: str) -> str:
        return f"the template's {name}"

    @server.resource_template("plain://{name}")
    def plain(name: str) -> str:
        return f"plain {name}"

    @server.completion("ref/prompt", "secret_prompt")
    def complete_prompt(argument: str, value: str, context: Any) -> list[str]:
        return ["a"]

    @server.completion("ref/resource", "secret://{name}")
    def complete_template(argument: str, value: str, context: Any) -> list[str]:
        return ["b"]

    return server, extension


def answer(server: Server, method: str, params: dict[str, Any], sees: bool) -> dict[str, Any]:
    capabilities = {"extensions": {SEES: {}}} if sees else {}
    reply = asyncio.run(server.handle(request(method, params, capabilities=capabilities)))
    assert reply.response is not None
    return reply.response


def result(server: Server, method: str, params: dict[str, Any], sees: bool) -> Any:
    response = answer(server, method, params, sees)
    assert "result" in response, response
    return response["result"]


@pytest.mark.parametrize("sees", [False, True])
def test_lists_show_what_the_rule_lets_this_caller_see(sees: bool) -> None:
    server, extension = hiding_server()
    tools = result(server, "tools/list", {}, sees)
    assert [t["name"] for t in tools["tools"]] == ["open_tool", *(["secret_tool"] * sees)]
    assert tools["cacheScope"] == "private"
    resources = result(server, "resources/list", {}, sees)
    assert [r["uri"] for r in resources["resources"]] == ["secret://fixed"] * sees
    templates = result(server, "resources/templates/list", {}, sees)
    shown = [t["uriTemplate"] for t in templates["resourceTemplates"]]
    assert shown == [*(["secret://{name}"] * sees), "plain://{name}"]
    prompts = result(server, "prompts/list", {}, sees)
    assert [p["name"] for p in prompts["prompts"]] == ["secret_prompt"] * sees
    assert prompts["cacheScope"] == "public"  # the rule said it does not vary
    assert extension.rule.asked == ["tools", "resources", "templates", "prompts"]


def test_a_hidden_item_answers_as_a_missing_one() -> None:
    server, _ = hiding_server()
    for method, params in (
        ("tools/call", {"name": "secret_tool"}),
        ("prompts/get", {"name": "secret_prompt"}),
    ):
        hidden = answer(server, method, params, sees=False)
        missing = answer(server, method, {"name": "no_such_item"}, sees=False)
        assert hidden["error"]["code"] == missing["error"]["code"] == -32602
        assert hidden["error"]["message"].replace("secret_tool", "X").replace(
            "secret_prompt", "X"
        ) == missing["error"]["message"].replace("no_such_item", "X")
    read = answer(server, "resources/read", {"uri": "plain://x"}, sees=False)
    assert read["result"]["contents"][0]["text"] == "plain x"
    for uri in ("secret://fixed", "secret://other"):  # neither the resource nor the template
        refused = answer(server, "resources/read", {"uri": uri}, sees=False)
        assert refused["error"] == answer(server, "resources/read", {"uri": "none://x"}, False)[
            "error"
        ] | {"data": {"uri": uri}}
    completed = answer(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "secret_prompt"},
            "argument": {"name": "a", "value": ""},
        },
        sees=False,
    )
    assert completed["error"]["code"] == -32602
    template = result(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "secret://{name}"},
            "argument": {"name": "name", "value": ""},
        },
        sees=False,
    )
    assert template["completion"]["values"] == []


def test_a_seen_item_is_served_as_without_a_rule() -> None:
    server, _ = hiding_server()
    called = result(server, "tools/call", {"name": "secret_tool"}, sees=True)
    assert called["content"] == [{"type": "text", "text": "secret"}]
    fixed = result(server, "resources/read", {"uri": "secret://fixed"}, sees=True)
    assert fixed["contents"][0]["text"] == "the fixed resource"
    other = result(server, "resources/read", {"uri": "secret://other"}, sees=True)
    assert other["contents"][0]["text"] == "the template's other"
    template = result(
        server,
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "secret://{name}"},
            "argument": {"name": "name", "value": ""},
        },
        sees=True,
    )
    assert template["completion"]["values"] == ["b"]


def test_without_a_rule_lists_stay_shared() -> None:
    server = Server("v", "1", caching=Caching(lists=SHARED))

    @server.tool
    def anything() -> str:
        return "x"

    assert result(server, "tools/list", {}, sees=False)["cacheScope"] == "public"


def test_an_extension_is_offered_once() -> None:
    server = Server("v", "1", extensions=[Hiding()])
    with pytest.raises(ValueError, match="offered already"):
        server.add_extension(Hiding())


def listed(server: Server, sees: bool) -> list[str]:
    return [tool["name"] for tool in result(server, "tools/list", {}, sees)["tools"]]


def test_the_rule_is_a_hook_of_the_servers_one_visibility() -> None:
    """The extension's rule is one of the server's visibility rules, not a filter of its
    own: the server's rules cannot show what it hides, and hide what it shows."""
    server, extension = hiding_server()
    assert server.registry.visibility.hooks == [extension.rule.hides]
    server.enable(names="secret_tool")
    assert listed(server, sees=False) == ["open_tool"]
    assert answer(server, "tools/call", {"name": "secret_tool"}, sees=False)["error"]["code"] == (
        -32602
    )
    server.disable(names="secret_tool")
    assert listed(server, sees=True) == ["open_tool"]
    assert answer(server, "tools/call", {"name": "secret_tool"}, sees=True)["error"]["code"] == (
        -32602
    )


@pytest.mark.parametrize("sees", [False, True])
def test_a_legacy_session_sees_what_the_rule_lets_it_see(sees: bool) -> None:
    server, _ = hiding_server()
    capabilities = {"extensions": {SEES: {}}} if sees else {}

    async def session() -> None:
        peer = LegacyPeer(server)
        opened = await peer.ask(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "legacy-test", "version": "1"},
            },
        )
        assert "result" in opened, opened
        tools = await peer.ask("tools/list")
        assert [t["name"] for t in tools["result"]["tools"]] == [
            "open_tool",
            *(["secret_tool"] * sees),
        ]
        called = await peer.call("secret_tool")
        read = await peer.ask("resources/read", {"uri": "secret://fixed"})
        got = await peer.ask("prompts/get", {"name": "secret_prompt"})
        if sees:
            assert called["result"]["content"] == [{"type": "text", "text": "secret"}]
            assert read["result"]["contents"][0]["text"] == "the fixed resource"
            assert "result" in got
        else:
            assert called["error"] == {"code": -32602, "message": "Unknown tool: secret_tool"}
            assert read["error"]["code"] == -32002
            assert got["error"] == {"code": -32602, "message": "Unknown prompt: secret_prompt"}

    asyncio.run(session())


def test_tool_search_never_finds_what_the_rule_hides() -> None:
    server = Server("v", "1", tool_search=ToolSearch(), extensions=[Hiding()])

    @server.tool
    def open_report(day: str) -> str:
        """Write the daily sales report."""
        return day

    @server.tool
    def open_mail(to: str) -> str:
        """Send an email to a customer."""
        return to

    @server.tool
    def secret_shredder(folder: str) -> str:
        """Shred the confidential contracts in a folder."""
        return folder

    query = "shred the contracts"
    assert "secret_shredder" not in searched(server, query)
    assert searched(server, "daily sales report")[0] == "open_report"
    shown = searched(server, query, capabilities={"extensions": {SEES: {}}})
    assert shown[0] == "secret_shredder"
    through = search_result(
        server,
        "tools/call",
        {
            "name": "call_tool",
            "arguments": {"name": "secret_shredder", "arguments": {"folder": "x"}},
        },
    )
    assert through["isError"] is True
    assert "Unknown tool: secret_shredder" in through["content"][0]["text"]
