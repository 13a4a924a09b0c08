"""A server that searches its tools, on the literal wire: tools/list shows the search,
search_tools finds (or finds nothing), hidden tools answer by name and through
call_tool, and what a caller may not see is never found."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from snodo import Limits, Server
from snodo.extensions.apps import App
from snodo.search import ToolSearch
from snodo_wire import Tool, ToolAnnotations
from tests.search.catalog import TOOLS, add_tools, catalog_server
from tests.support.wire import answer, request


class CatalogEntry(BaseModel):
    """SEP-2636's ToolCatalogEntry: no member it does not define."""

    model_config = ConfigDict(extra="forbid")
    name: str
    title: str | None = None
    summary: str
    schemaHash: str  # noqa: N815
    annotations: ToolAnnotations | None = None


RENDERS = {
    "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
}


def result(server: Server, method: str, params: dict[str, Any], **options: Any) -> Any:
    reply = raw(server, method, params, **options)
    assert "result" in reply, reply
    return reply["result"]


def raw(server: Server, method: str, params: dict[str, Any], **options: Any) -> dict[str, Any]:
    """The response to one request; checked against the pinned schema, but for the
    methods of SEP-2636, which it does not define (their shapes are checked here)."""
    capabilities = options.pop("capabilities", None)
    message = request(method, params, capabilities=capabilities)
    if method in ("tools/catalog", "tools/describe"):
        reply = asyncio.run(server.handle(message, **options)).response
        assert reply is not None
        if "result" in reply:
            for tool in reply["result"]["tools"]:
                (CatalogEntry if method == "tools/catalog" else Tool).model_validate(tool)
        return reply
    return answer(server, message, **options)


def searched(server: Server, query: str, **options: Any) -> list[str]:
    found = result(
        server, "tools/call", {"name": "search_tools", "arguments": {"query": query}}, **options
    )
    assert "isError" not in found, found
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    return [tool["name"] for tool in found["structuredContent"]["tools"]]


def listed_bytes(listing: dict[str, Any]) -> int:
    return len(json.dumps(listing["tools"], separators=(",", ":")))


def test_the_list_shows_the_search_and_is_a_small_part_of_the_whole() -> None:
    searching = catalog_server(ToolSearch(always_visible=["get_balance"]))
    plain = catalog_server()
    small = result(searching, "tools/list", {})
    whole = result(plain, "tools/list", {})
    assert [t["name"] for t in small["tools"]] == ["get_balance", "search_tools", "call_tool"]
    assert len(whole["tools"]) == 150
    assert listed_bytes(small) < 0.05 * listed_bytes(whole)
    search = small["tools"][1]
    assert search["inputSchema"]["required"] == ["query"]
    assert search["annotations"]["readOnlyHint"] is True


def test_search_answers_the_tools_that_fit_best_first_with_their_schemas() -> None:
    server = catalog_server(ToolSearch())
    found = result(
        server,
        "tools/call",
        {"name": "search_tools", "arguments": {"query": "send an email to dana@acme.com"}},
    )
    tools = found["structuredContent"]["tools"]
    assert tools[0]["name"] == "send_email"
    definition = next(t for t in TOOLS if t["name"] == "send_email")
    assert tools[0] == {
        "name": "send_email",
        "description": definition["description"],
        "inputSchema": definition["inputSchema"],
    }
    assert 1 <= len(tools) <= 5
    assert searched(server, "Schick Anna eine Direktnachricht auf Slack")[0] == (
        "slack_send_direct_message"
    )
    assert searched(server, "明日の東京の天気を教えて")[0] == "get_weather_forecast"


def test_nothing_fits_is_an_empty_list_not_the_nearest_tool() -> None:
    server = catalog_server(ToolSearch())
    for query in ("order a large pepperoni pizza", "what's my horoscope today"):
        assert searched(server, query) == []


def test_max_results_bounds_the_answer() -> None:
    server = catalog_server(ToolSearch(max_results=2))
    assert len(searched(server, "list the pull requests of a repository")) == 2


def test_a_hidden_tool_answers_by_name_and_through_call_tool() -> None:
    server = catalog_server(ToolSearch())
    direct = result(server, "tools/call", {"name": "get_balance", "arguments": {}})
    assert direct["content"] == [{"type": "text", "text": "get_balance ran with nothing"}]
    through = result(
        server,
        "tools/call",
        {"name": "call_tool", "arguments": {"name": "geocode", "arguments": {"address": "x"}}},
    )
    assert through["content"] == [{"type": "text", "text": "geocode ran with address"}]


def test_call_tool_refuses_what_it_cannot_call_as_a_tool_error() -> None:
    server = catalog_server(ToolSearch())
    cases = [
        ({"name": "nothing_here"}, "Unknown tool: nothing_here"),
        ({"name": "search_tools", "arguments": {"query": "x"}}, "not search_tools"),
        ({"name": 5}, "name must be a tool's name"),
        ({"name": "geocode", "arguments": []}, "arguments an object"),
    ]
    for arguments, message in cases:
        refused = result(server, "tools/call", {"name": "call_tool", "arguments": arguments})
        assert refused["isError"] is True
        assert message in refused["content"][0]["text"]
    bad = result(server, "tools/call", {"name": "search_tools", "arguments": {"query": ""}})
    assert bad["isError"] is True
    # A tool's own checks still apply when it is called through call_tool.
    wrong = result(server, "tools/call", {"name": "call_tool", "arguments": {"name": "geocode"}})
    assert wrong["isError"] is True and "Invalid arguments for tool geocode" in str(wrong)


def scoped_server() -> Server:
    server = Server("scoped", "1", hide_unauthorized=True, tool_search=ToolSearch())
    add_tools(server, [t for t in TOOLS if t["name"] != "refund_payment"])
    add_tools(server, [t for t in TOOLS if t["name"] == "refund_payment"], scopes=["billing"])
    return server


def test_a_tool_hidden_from_a_caller_is_never_in_its_results() -> None:
    server = scoped_server()
    query = "give the customer their money back for payment pi_777"
    assert searched(server, query, scopes=["billing"])[0] == "refund_payment"
    assert "refund_payment" not in searched(server, query, scopes=[])
    # Nor is it called through call_tool, nor described: it is as missing as a missing one.
    refused = result(
        server,
        "tools/call",
        {"name": "call_tool", "arguments": {"name": "refund_payment", "arguments": {}}},
        scopes=[],
    )
    assert refused["isError"] is True
    assert refused["content"][0]["text"] == "Unknown tool: refund_payment"
    hidden = raw(server, "tools/describe", {"names": ["refund_payment"]}, scopes=[])
    missing = raw(server, "tools/describe", {"names": ["no_such_tool"]}, scopes=[])
    assert hidden["error"]["code"] == missing["error"]["code"] == -32002
    assert hidden["error"]["data"] == {"unknownNames": ["refund_payment"]}
    found = result(server, "tools/catalog", {"query": query}, scopes=[])
    assert "refund_payment" not in [entry["name"] for entry in found["tools"]]


def test_an_app_only_tool_is_found_only_by_a_client_that_renders_views() -> None:
    server = Server("apps", "1", tool_search=ToolSearch())
    view = App(server, "ui://weather/view", "<!doctype html><p>weather</p>")

    @view.tool
    def forecast(city: str) -> str:
        """Today's weather forecast for a city."""
        return city

    @view.tool(visibility=["app"])
    def refresh_forecast(city: str) -> str:
        """Fetch the weather forecast for a city again, for the view's button."""
        return city

    query = "refresh the weather forecast"
    assert "refresh_forecast" in searched(server, query, capabilities=RENDERS)
    assert searched(server, query) == ["forecast"]


def test_the_index_follows_the_catalog_as_it_changes() -> None:
    server = Server("changing", "1", tool_search=ToolSearch())
    add_tools(server, [t for t in TOOLS if t["name"] in ("send_email", "get_balance")])
    assert searched(server, "turn on the out of office auto reply") == []
    add_tools(server, [t for t in TOOLS if t["name"] == "set_auto_reply"])
    assert searched(server, "turn on the out of office auto reply")[0] == "set_auto_reply"
    server.remove_tool("set_auto_reply")
    assert searched(server, "turn on the out of office auto reply") == []


def test_tools_list_takes_a_query_sep_1821() -> None:
    server = catalog_server(ToolSearch())
    found = result(server, "tools/list", {"query": "order a pizza"})
    assert found["tools"] == [] and found["cacheScope"] == "private"
    found = result(server, "tools/list", {"query": "scale a kubernetes deployment"})
    assert found["tools"][0] == next(t for t in TOOLS if t["name"] == "k8s-scale-deployment")
    refused = answer(server, request("tools/list", {"query": "x" * 1001}))
    assert refused["error"]["code"] == -32602


def test_the_catalog_and_describe_of_sep_2636() -> None:
    server = catalog_server(ToolSearch(), limits=Limits(page_size=60))
    discovered = result(server, "server/discover", {})
    settings = discovered["capabilities"]["extensions"]["io.snodo/tool-search"]
    assert settings["methods"] == ["tools/catalog", "tools/describe"]
    entries: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = result(server, "tools/catalog", {} if cursor is None else {"cursor": cursor})
        entries += page["tools"]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert [e["name"] for e in entries] == [t["name"] for t in TOOLS]
    for entry in entries:
        assert set(entry) <= {"name", "title", "summary", "schemaHash", "annotations"}
        assert 0 < len(entry["summary"]) <= 200
        assert len(entry["schemaHash"]) == 64
    names = ["zip_files", "send_sms", "geocode"]
    described = result(server, "tools/describe", {"names": names})["tools"]
    assert [d["name"] for d in described] == names  # in the order asked
    by_name = {e["name"]: e for e in entries}
    from snodo.search.disclosure import schema_hash

    assert all(by_name[d["name"]]["schemaHash"] == schema_hash(d) for d in described)
    unknown = raw(server, "tools/describe", {"names": ["geocode", "x", "y", "x"]})
    assert unknown["error"]["code"] == -32002
    assert unknown["error"]["data"] == {"unknownNames": ["x", "y"]}
    queried = result(server, "tools/catalog", {"query": "decompress an archive"})
    assert queried["tools"][0]["name"] == "unzip_archive"
    for params in ({"names": []}, {"names": ["a"] * 101}, {}):
        assert raw(server, "tools/describe", params)["error"]["code"] == -32602


def test_search_and_call_keep_names_of_their_own() -> None:
    with pytest.raises(ValueError, match="names of their own"):
        ToolSearch(search_tool="find", call_tool="find")
    with pytest.raises(ValueError, match="at least 1"):
        ToolSearch(max_results=0)
    search = ToolSearch()
    Server("one", "1", tool_search=search)
    with pytest.raises(ValueError, match="serves one server"):
        Server("two", "1", tool_search=search)
