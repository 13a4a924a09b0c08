"""Registration, complete: the listed fields as typed keywords on every kind of item and
on the server, removing each kind with the list change heard, tool names checked, cache
hints per list and per resource (and refused when negative), and lists that show a
caller only what its scopes reach."""

from __future__ import annotations

import json
from typing import Any

import pytest

from snodo import CacheHint, Caching, Publishing, Server
from snodo.server.tools import ToolDefinitionError
from tests.support.wire import answer, request

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}


def listed(server: Server, method: str, **options: Any) -> dict[str, Any]:
    return answer(server, request(method, {}, id=1), **options)["result"]


def test_every_item_takes_its_listed_fields_as_keywords() -> None:
    server = Server(
        "full", "1", publishing=Publishing(icons=[ICON], website_url="https://example.com")
    )

    @server.tool(title="Add", icons=[ICON], meta={"x": 1}, annotations={"readOnlyHint": True})
    def add(a: int) -> str:
        return str(a)

    @server.resource(
        "notes://index",
        title="Index",
        icons=[ICON],
        annotations={"audience": ["user"], "priority": 0.5},
        size=42,
        meta={"y": 2},
        mime_type="text/plain",
    )
    def index() -> str:
        return "index"

    @server.resource_template(
        "notes://{name}", icons=[ICON], annotations={"priority": 1.0}, meta={"z": 3}
    )
    def note(name: str) -> str:
        return name

    @server.prompt(title="Hello", icons=[ICON], meta={"w": 4})
    def hello() -> str:
        return "hi"

    assert listed(server, "tools/list")["tools"][0] == {
        "name": "add",
        "title": "Add",
        "inputSchema": {
            "additionalProperties": False,
            "properties": {"a": {"type": "integer"}},
            "required": ["a"],
            "type": "object",
        },
        "annotations": {"readOnlyHint": True},
        "icons": [ICON],
        "_meta": {"x": 1},
    }
    assert listed(server, "resources/list")["resources"] == [
        {
            "uri": "notes://index",
            "name": "index",
            "title": "Index",
            "mimeType": "text/plain",
            "icons": [ICON],
            "annotations": {"audience": ["user"], "priority": 0.5},
            "size": 42,
            "_meta": {"y": 2},
        }
    ]
    assert listed(server, "resources/templates/list")["resourceTemplates"] == [
        {
            "uriTemplate": "notes://{name}",
            "name": "note",
            "icons": [ICON],
            "annotations": {"priority": 1.0},
            "_meta": {"z": 3},
        }
    ]
    assert listed(server, "prompts/list")["prompts"] == [
        {"name": "hello", "title": "Hello", "icons": [ICON], "_meta": {"w": 4}}
    ]
    info = listed(server, "server/discover")["_meta"]["io.modelcontextprotocol/serverInfo"]
    assert info == {
        "name": "full",
        "version": "1",
        "websiteUrl": "https://example.com",
        "icons": [ICON],
    }


def test_removing_each_kind_is_heard_by_listeners() -> None:
    server = Server("removals", "1")
    heard: list[str] = []
    server.registry._changed = heard.append  # where the server hears the registry

    @server.resource("notes://a")
    def a() -> str:
        return "a"

    @server.resource("notes://kept")
    def kept() -> str:
        return "kept"

    @server.resource_template("notes://{name}")
    def b(name: str) -> str:
        return name

    @server.prompt
    def c() -> str:
        return "c"

    heard.clear()
    server.remove_resource("notes://a")
    server.remove_template("notes://{name}")
    server.remove_prompt("c")
    server.remove_prompt("c")  # gone already: nothing to hear
    assert heard == ["resourcesListChanged", "resourcesListChanged", "promptsListChanged"]
    assert [r["uri"] for r in listed(server, "resources/list")["resources"]] == ["notes://kept"]
    assert listed(server, "resources/templates/list")["resourceTemplates"] == []


@pytest.mark.parametrize("name", ["", "has space", "comma,name", "x" * 129, "é", "a/b", "<lambda>"])
def test_a_tool_name_outside_the_spec_rules_is_refused(name: str) -> None:
    server = Server("names", "1")
    with pytest.raises(ToolDefinitionError, match="a tool name is 1 to 128 of"):
        server.tool(name=name)(lambda: "x")


@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "x" * 128])
def test_the_specs_example_names_are_taken(name: str) -> None:
    server = Server("names", "1")
    server.tool(name=name)(lambda: "x")
    assert listed(server, "tools/list")["tools"][0]["name"] == name


def test_cache_hints_per_list_and_per_resource() -> None:
    server = Server(
        "cached",
        "1",
        caching=Caching(lists={"tools/list": CacheHint(60_000, "public")}, read=CacheHint(1_000)),
    )

    @server.tool
    def t() -> str:
        return "t"

    @server.prompt
    def p() -> str:
        return "p"

    @server.resource("notes://hot", cache=CacheHint(5, "public"))
    def hot() -> str:
        return "hot"

    @server.resource("notes://plain")
    def plain() -> str:
        return "plain"

    tools = listed(server, "tools/list")
    assert (tools["ttlMs"], tools["cacheScope"]) == (60_000, "public")
    prompts = listed(server, "prompts/list")
    assert (prompts["ttlMs"], prompts["cacheScope"]) == (0, "private")

    def read(uri: str) -> tuple[int, str]:
        result = answer(server, request("resources/read", {"uri": uri}, id=2))["result"]
        return result["ttlMs"], result["cacheScope"]

    assert read("notes://hot") == (5, "public")
    assert read("notes://plain") == (1_000, "private")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: CacheHint(-1), "ttl_ms must be a whole number of milliseconds, 0 or more"),
        (lambda: CacheHint(1.5), "ttl_ms must be a whole number"),  # type: ignore[arg-type]
        (lambda: CacheHint(1, "shared"), "scope must be 'public' or 'private'"),  # type: ignore[arg-type]
        (
            lambda: Server("x", "1", caching=Caching(lists={"tools/call": CacheHint()})),
            "is not one of",
        ),
    ],
)
def test_bad_cache_hints_are_refused_when_made(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def scoped_server(hide: bool) -> Server:
    server = Server(
        "scoped", "1", hide_unauthorized=hide, caching=Caching(lists=CacheHint(10, "public"))
    )

    @server.tool
    def open_tool() -> str:
        return "open"

    @server.tool(scopes=["admin"])
    def admin_tool() -> str:
        return "admin"

    @server.resource("notes://secret", scopes=["notes:read"])
    def secret() -> str:
        return "secret"

    @server.prompt(scopes=["admin"])
    def admin_prompt() -> str:
        return "admin"

    return server


def test_lists_show_a_caller_only_what_its_scopes_reach() -> None:
    server = scoped_server(hide=True)
    few = listed(server, "tools/list", scopes=["notes:read"])
    assert [t["name"] for t in few["tools"]] == ["open_tool"]
    assert few["cacheScope"] == "private"  # this caller's list, never shared
    assert [
        r["uri"] for r in listed(server, "resources/list", scopes=["notes:read"])["resources"]
    ] == ["notes://secret"]
    assert listed(server, "prompts/list", scopes=[])["prompts"] == []
    everything = listed(server, "tools/list", scopes=["admin"])
    assert [t["name"] for t in everything["tools"]] == ["open_tool", "admin_tool"]
    # The call itself is still refused, as the call of a tool that does not exist.
    refused = answer(
        server,
        request("tools/call", {"name": "admin_tool", "arguments": {}}, id=3),
        scopes=["notes:read"],
    )
    assert refused["error"] == {"code": -32602, "message": "Unknown tool: admin_tool"}
    # Without OAuth (no scopes: stdio) nothing is hidden.
    assert len(listed(server, "tools/list")["tools"]) == 2


def concealing_server() -> Server:
    """Each kind of item needing ``admin``, and one visible template that a hidden
    resource's URI also matches."""
    server = Server("concealing", "1", hide_unauthorized=True)

    @server.tool(scopes=["admin"])
    def admin_tool() -> str:
        return "admin"

    @server.prompt(scopes=["admin"])
    def admin_prompt(topic: str) -> str:
        return topic

    @server.resource("notes://secret", scopes=["admin"])
    def secret() -> str:
        return "secret"

    @server.resource_template("vault://{key}", scopes=["admin"])
    def vault(key: str) -> str:
        return key

    @server.resource_template("notes://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    @server.completion("ref/prompt", "admin_prompt")
    @server.completion("ref/resource", "vault://{key}")
    def complete(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [value + "-x"]

    return server


def test_a_hidden_item_answers_exactly_as_a_missing_one() -> None:
    server = concealing_server()

    def asked(method: str, params: dict[str, Any], scopes: list[str]) -> dict[str, Any]:
        return answer(server, request(method, params, id=7), scopes=scopes)

    def shape(reply: dict[str, Any], name: str) -> str:
        return json.dumps(reply).replace(name, "NAME")

    def complete(ref: dict[str, str]) -> dict[str, Any]:
        return {"ref": ref, "argument": {"name": "topic", "value": "a"}}

    cases = [  # method, the hidden item's name or URI, a missing one's, params for a name
        ("tools/call", "admin_tool", "nothing", lambda name: {"name": name}),
        (
            "prompts/get",
            "admin_prompt",
            "nothing",
            lambda name: {"name": name, "arguments": {"topic": "t"}},
        ),
        ("resources/read", "vault://k", "nothing://k", lambda uri: {"uri": uri}),
        (
            "completion/complete",
            "admin_prompt",
            "nothing",
            lambda name: complete({"type": "ref/prompt", "name": name}),
        ),
        (
            "completion/complete",
            "vault://{key}",
            "nothing://{key}",
            lambda uri: complete({"type": "ref/resource", "uri": uri}),
        ),
    ]
    for method, name, gone, params in cases:
        hidden = params(name)
        concealed = asked(method, hidden, ["notes:read"])
        absent = asked(method, params(gone), ["notes:read"])
        assert shape(concealed, name) == shape(absent, gone), method
        assert "admin" not in json.dumps(concealed).replace(name, ""), method
        # Granted, the item is there (and without OAuth, nothing is hidden).
        for scopes in (["admin"], None):
            found = answer(server, request(method, hidden, id=7), scopes=scopes)
            assert "result" in found, (method, found)
    # A hidden fixed resource is passed over, as if never registered: the visible
    # template its URI matches reads it, as it would if the resource did not exist.
    read = asked("resources/read", {"uri": "notes://secret"}, [])
    assert read["result"]["contents"][0]["text"] == "note secret"


def test_by_default_lists_show_everything() -> None:
    server = scoped_server(hide=False)
    shown = listed(server, "tools/list", scopes=[])
    assert [t["name"] for t in shown["tools"]] == ["open_tool", "admin_tool"]
    assert shown["cacheScope"] == "public"
