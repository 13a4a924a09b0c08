"""snodo.server.registry.Registry: what is registered, and what dispatch and transports ask."""

from __future__ import annotations

from typing import Any

from snodo.server.prompts import make_prompt
from snodo.server.registry import Registry
from snodo.server.resources import make_resource, make_template
from snodo.server.tools import make_tool

HEADED = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "note": {"type": "string"},
    },
}


def tool(**arguments: Any) -> str:
    """A tool."""
    return "ok"


def reader() -> str:
    return "text"


def by_name(**variables: str) -> str:
    return "text"


def greet() -> str:
    """A prompt."""
    return "hello"


def test_changes_clients_listen_for_are_reported() -> None:
    heard: list[str] = []
    registry = Registry(heard.append)
    registry.add_tool(
        make_tool(tool, {"name": "a"})
    )  # the first tool changes capabilities, not a list
    registry.add_tool(make_tool(tool, {"name": "b"}))
    registry.add_tool(make_tool(tool, {"name": "b"}))
    registry.remove_tool("b")
    registry.remove_tool("never-there")
    registry.add_resource(make_resource(reader, "note://one"))
    registry.add_template(make_template(by_name, "note://{name}"))
    registry.add_prompt(make_prompt(greet))
    assert heard == [
        "toolsListChanged",
        "toolsListChanged",
        "toolsListChanged",
        "resourcesListChanged",
        "resourcesListChanged",  # a template is in the resource list's family
        "promptsListChanged",
    ]
    assert [d["name"] for d in registry.definitions("tools")] == ["a"]
    assert [d["uri"] for d in registry.definitions("resources")] == ["note://one"]
    assert [d["uriTemplate"] for d in registry.definitions("templates")] == ["note://{name}"]
    assert [d["name"] for d in registry.definitions("prompts")] == ["greet"]
    heard.clear()
    registry.add_template(make_template(by_name, "note://{name}"))  # again: replaces it
    assert [d["uriTemplate"] for d in registry.definitions("templates")] == ["note://{name}"]
    for remove, key in [
        (registry.remove_resource, "note://one"),
        (registry.remove_template, "note://{name}"),
        (registry.remove_prompt, "greet"),
        (registry.remove_resource, "note://never"),
        (registry.remove_template, "note://{never}"),
        (registry.remove_prompt, "never"),
    ]:
        remove(key)
    assert heard == [
        "resourcesListChanged",
        "resourcesListChanged",
        "resourcesListChanged",
        "promptsListChanged",
    ]
    assert registry.definitions("resources") == registry.definitions("templates") == []
    assert registry.definitions("prompts") == []


def test_capabilities_and_offered_methods_follow_what_is_registered() -> None:
    registry = Registry()
    assert registry.capabilities() == {"logging": {}}
    assert [registry.offers(m) for m in ("tools/list", "prompts/get", "completion/complete")] == [
        False,
        False,
        False,
    ]
    assert registry.offers("server/discover")
    registry.add_template(make_template(by_name, "note://{name}"))
    assert registry.capabilities() == {
        "logging": {},
        "resources": {"listChanged": True, "subscribe": True},
        "completions": {},
    }
    assert registry.offers("resources/read") and registry.offers("completion/complete")
    assert not registry.offers("prompts/list")


def test_mirrored_headers_of_a_tool_and_none_for_unknown_names() -> None:
    registry = Registry()
    registry.add_tool(make_tool(tool, {"name": "headed", "input_schema": HEADED}))
    registry.add_tool(make_tool(tool, {"name": "plain"}))
    assert registry.mirrored_headers("headed") == ((("region",), "Region"),)
    assert registry.mirrored_headers("plain") == ()
    assert registry.mirrored_headers("missing") == ()


def test_a_fixed_resource_wins_over_templates_tried_in_order() -> None:
    registry = Registry()
    registry.add_template(make_template(by_name, "note://{name}", {"mime_type": "text/markdown"}))
    registry.add_template(make_template(by_name, "note://{name}/{part}"))
    registry.add_resource(
        make_resource(reader, "note://fixed", {"mime_type": "text/plain", "scopes": ["notes"]})
    )
    fixed = registry.find_resource("note://fixed")
    assert fixed is not None and fixed[1:] == ({}, "text/plain", frozenset({"notes"}), None)
    templated = registry.find_resource("note://menu")
    assert templated is not None
    assert templated[1:] == ({"name": "menu"}, "text/markdown", frozenset(), None)
    assert registry.find_resource("other://x") is None
