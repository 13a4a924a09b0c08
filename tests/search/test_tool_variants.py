"""Tool search's own tools under every served revision, on the literal wire: under
SEP-3279's draft (2026-12-01) ``search_tools`` and ``call_tool`` are listed with their
``outputVariants`` and answer ``outputs`` as a registered tool does; the pinned tools
and the listings of ``query``, ``tools/describe`` and ``tools/catalog`` declare the
draft's shape too; 2026-07-28 and 2025-11-25 keep the content shape. Every answer is
checked against its revision (``check_answers``)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from snodo.search import ToolSearch
from snodo.search.disclosure import schema_hash
from snodo.server import Server, Spec
from tests.support.variants import DRAFT, LEGACY, MODERN, asked, legacy_answers, wire


class Customers(BaseModel):
    names: list[str]


def _server() -> Server:
    server = Server(
        "crm",
        "1.0",
        versions=[DRAFT, MODERN, LEGACY],
        spec=Spec(check_answers=True),
        tool_search=ToolSearch(always_visible=["regions"]),
    )

    @server.tool
    def find_customers(query: str) -> Customers:
        """Find customers by name."""
        return Customers(names=[f"{query} Retail"])

    @server.tool
    def regions() -> list[str]:
        """The sales regions."""
        return ["NA", "EMEA"]

    return server


INFO = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"crm","version":"1.0"}}'
REGIONS = (
    '{"name":"regions","description":"The sales regions.","inputSchema":'
    '{"additionalProperties":false,"properties":{},"type":"object"},'
)
SEARCH = (
    '{"name":"search_tools","title":"Search tools","description":"Find the tools for a task '
    "among the many this server has. Say in a few words what you want to do, in any language. "
    "Answers the tools that fit, best first, with their input schemas, and none when no tool "
    'fits. Call a tool found by its name, or with call_tool.","inputSchema":{"type":"object",'
    '"properties":{"query":{"type":"string","description":"What you want to do, in a few '
    'words","maxLength":1000}},"required":["query"]},'
)
SEARCH_SCHEMA = (
    '{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object"}}},'
    '"required":["tools"]}'
)
ANNOTATIONS = '"annotations":{"readOnlyHint":true,"openWorldHint":false}'
CALL = (
    '{"name":"call_tool","title":"Call a tool","description":"Call a tool that search_tools '
    'found, by its name, with its arguments.","inputSchema":{"type":"object","properties":'
    '{"name":{"type":"string","description":"The tool\'s name"},"arguments":{"type":"object",'
    '"description":"Its arguments, as its input schema says"}},"required":["name"]}'
)
CONTENT = '{"audience":"assistant","format":"content"}'
FOUND = {
    "tools": [
        {
            "name": "find_customers",
            "description": "Find customers by name.",
            "inputSchema": {
                "additionalProperties": False,
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "type": "object",
            },
        }
    ]
}
FOUND_JSON = json.dumps(FOUND, separators=(",", ":"))


def test_the_draft_lists_the_search_tools_and_the_pinned_ones_with_their_variants() -> None:
    assert wire(_server(), "tools/list", {}) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":['
        f'{REGIONS}"outputVariants":[{CONTENT},{{"audience":"assistant","format":"structured",'
        '"schema":{"items":{"type":"string"},"type":"array"}}]},'
        f'{SEARCH}{ANNOTATIONS},"outputVariants":[{CONTENT},{{"audience":"assistant",'
        f'"format":"structured","schema":{SEARCH_SCHEMA}}}]}},'
        f'{CALL},"outputVariants":[{CONTENT}]}}],'
        f'"ttlMs":0,"cacheScope":"private",{INFO}}}}}'
    )


def test_2026_07_28_and_2025_11_25_list_the_content_shape() -> None:
    server = _server()
    modern = (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":['
        f'{REGIONS}"outputSchema":{{"type":"object","properties":{{"result":{{"items":'
        '{"type":"string"},"type":"array"}},"required":["result"],"x-snodo-wrapped":true}},'
        f'{SEARCH}"outputSchema":{SEARCH_SCHEMA},{ANNOTATIONS}}},{CALL}}}],'
        f'"ttlMs":0,"cacheScope":"private",{INFO}}}}}'
    )
    assert wire(server, "tools/list", {}, MODERN) == modern
    (legacy,) = legacy_answers(server, [("tools/list", {})])
    assert json.loads(legacy)["result"]["tools"] == json.loads(modern)["result"]["tools"]


def test_search_tools_answers_the_outputs_asked_for() -> None:
    server = _server()
    query = {"name": "search_tools", "arguments": {"query": "customers"}}
    structured = {**query, "requestedOutputs": asked(("assistant", "structured"))}
    assert wire(server, "tools/call", structured) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        f'"assistant","format":"structured","structuredContent":{FOUND_JSON}}}],{INFO}}}}}'
    )
    text = json.dumps(FOUND_JSON)
    assert wire(server, "tools/call", query) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        f'"assistant","format":"content","content":[{{"type":"text","text":{text}}}]}}],{INFO}}}}}'
    )
    both = {
        **query,
        "requestedOutputs": asked(("assistant", "content"), ("assistant", "structured")),
    }
    outputs = json.loads(wire(server, "tools/call", both))["result"]["outputs"]
    assert [(o["audience"], o["format"]) for o in outputs] == [
        ("assistant", "content"),
        ("assistant", "structured"),
    ]


def test_search_tools_under_2026_07_28_and_2025_11_25_keeps_the_content_shape() -> None:
    server = _server()
    query = {"name": "search_tools", "arguments": {"query": "customers"}}
    modern = (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
        f'"text":{json.dumps(FOUND_JSON)}}}],"structuredContent":{FOUND_JSON},{INFO}}}}}'
    )
    assert wire(server, "tools/call", query, MODERN) == modern
    (legacy,) = legacy_answers(server, [("tools/call", query)])
    assert legacy == (
        '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text",'
        f'"text":{json.dumps(FOUND_JSON)}}}],"structuredContent":{FOUND_JSON}}}}}'
    )


def test_a_search_with_no_query_is_a_failed_content_output() -> None:
    server = _server()
    params = {"name": "search_tools", "arguments": {"query": ""}}
    assert wire(server, "tools/call", params) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        '"assistant","format":"content","content":[{"type":"text","text":"Invalid arguments for '
        'tool search_tools: query must be a string of 1 to 1000 characters"}]}],"isError":true,'
        f"{INFO}}}}}"
    )
    structured_only = {**params, "requestedOutputs": asked(("assistant", "structured"))}
    assert wire(server, "tools/call", structured_only) == (
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Tool search_tools failed: '
        "Invalid arguments for tool search_tools: query must be a string of 1 to 1000 "
        'characters"}}'
    )


def test_call_tool_answers_the_called_tools_content_output() -> None:
    server = _server()
    called = {"name": "call_tool", "arguments": {"name": "regions"}}
    assert wire(server, "tools/call", called) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        '"assistant","format":"content","content":[{"type":"text","text":"[\\"NA\\", '
        f'\\"EMEA\\"]"}}]}}],{INFO}}}}}'
    )
    unknown = {"name": "call_tool", "arguments": {"name": "nope"}}
    assert wire(server, "tools/call", unknown) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        '"assistant","format":"content","content":[{"type":"text","text":"Unknown tool: nope"}]}],'
        f'"isError":true,{INFO}}}}}'
    )
    legacy = json.loads(wire(server, "tools/call", called, MODERN))["result"]
    assert legacy["structuredContent"] == {"result": ["NA", "EMEA"]}


@pytest.mark.parametrize(
    ("tool", "selectors", "message"),
    [
        (
            "call_tool",
            [("assistant", "structured")],
            "Tool call_tool declares no output assistant/structured (it declares "
            "assistant/content)",
        ),
        (
            "search_tools",
            [("programmatic", "structured")],
            "Tool search_tools declares no output programmatic/structured (it declares "
            "assistant/content, assistant/structured)",
        ),
        ("search_tools", [], "requestedOutputs names no output"),
    ],
)
def test_an_output_the_search_tools_do_not_declare_is_invalid_params(
    tool: str, selectors: list[tuple[str, str]], message: str
) -> None:
    arguments = {"query": "customers"} if tool == "search_tools" else {"name": "regions"}
    params = {"name": tool, "arguments": arguments, "requestedOutputs": asked(*selectors)}
    assert wire(_server(), "tools/call", params) == (
        f'{{"jsonrpc":"2.0","id":1,"error":{{"code":-32602,"message":"{message}"}}}}'
    )


def test_the_list_query_describe_and_catalog_declare_the_drafts_shape() -> None:
    server = _server()
    listed = json.loads(wire(server, "tools/list", {"query": "regions"}))["result"]["tools"]
    described = json.loads(wire(server, "tools/describe", {"names": ["regions"]}))
    (definition,) = described["result"]["tools"]
    assert listed == [definition]
    assert "outputSchema" not in definition
    assert definition["outputVariants"][1]["schema"] == {
        "items": {"type": "string"},
        "type": "array",
    }
    entries = json.loads(wire(server, "tools/catalog", {}))["result"]["tools"]
    (entry,) = [entry for entry in entries if entry["name"] == "regions"]
    assert entry["schemaHash"] == schema_hash(definition)
    modern = json.loads(wire(server, "tools/describe", {"names": ["regions"]}, MODERN))
    assert modern["result"]["tools"][0]["outputSchema"]["x-snodo-wrapped"] is True
    entries = json.loads(wire(server, "tools/catalog", {}, MODERN))["result"]["tools"]
    (modern_entry,) = [entry for entry in entries if entry["name"] == "regions"]
    assert modern_entry["schemaHash"] == schema_hash(modern["result"]["tools"][0])
    assert modern_entry["schemaHash"] != entry["schemaHash"]
