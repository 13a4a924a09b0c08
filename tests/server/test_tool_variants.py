"""The draft revision 2026-12-01 (SEP-3279) served from the same handlers: each tool
listed with its ``outputVariants``, each call answered with the ``outputs`` its
``requestedOutputs`` names, and 2026-07-28 and 2025-11-25 answers exactly as they were
before the draft was served (the literals below are those answers, taken from the
server without the draft's encoder). Every answer is checked against its revision."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from snodo.core.result import ToolError
from snodo.revisions import REVISIONS
from snodo.server import Server, Spec
from tests.support.variants import DRAFT, LEGACY, MODERN, legacy_answers, wire


class Customer(BaseModel):
    customerId: str  # noqa: N815 (the SEP's field names, on the wire as they are)
    displayName: str  # noqa: N815


class Customers(BaseModel):
    items: list[Customer]


def _server(ran: list[str] | None = None) -> Server:
    """One tool with an output schema, one without (and that may fail)."""
    server = Server("crm", "1.0", versions=[DRAFT, MODERN, LEGACY], spec=Spec(check_answers=True))

    @server.tool
    def search_customers(query: str) -> Customers:
        """Find customers by name."""
        if ran is not None:
            ran.append(query)
        return Customers(items=[Customer(customerId="cust_1042", displayName=f"{query} Retail")])

    @server.tool
    def summarize(query: str) -> str:
        """Say what was found."""
        if query == "fail":
            raise ToolError("nothing matches fail")
        return f"I found 1 {query} customer record."

    return server


def _call(tool: str, query: Any, *selectors: tuple[str, str]) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": {"query": query}}
    if selectors:
        params["requestedOutputs"] = [{"audience": a, "format": f} for a, f in selectors]
    return params


INFO = '"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"crm","version":"1.0"}}'
INPUT = (
    '"inputSchema":{"additionalProperties":false,"properties":{"query":{"type":"string"}},'
    '"required":["query"],"type":"object"}'
)
SCHEMA = (
    '{"$defs":{"Customer":{"properties":{"customerId":{"type":"string"},"displayName":'
    '{"type":"string"}},"required":["customerId","displayName"],"type":"object"}},'
    '"properties":{"items":{"items":{"$ref":"#/$defs/Customer"},"type":"array"}},'
    '"required":["items"],"type":"object"}'
)
STRUCTURED = '{"items":[{"customerId":"cust_1042","displayName":"Globex Retail"}]}'
MIRROR = (
    '[{"type":"text","text":"{\\"items\\": [{\\"customerId\\": \\"cust_1042\\", '
    '\\"displayName\\": \\"Globex Retail\\"}]}"}]'
)
SAID = '[{"type":"text","text":"I found 1 Globex customer record."}]'

# -- 2026-07-28 and 2025-11-25: unchanged -------------------------------------------------

BEFORE = {
    MODERN: [
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":'
        f'"search_customers","description":"Find customers by name.",{INPUT},"outputSchema":'
        f'{SCHEMA}}},{{"name":"summarize","description":"Say what was found.",{INPUT}}}],'
        f'"ttlMs":0,"cacheScope":"private",{INFO}}}}}',
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":'
        f'{MIRROR},"structuredContent":{STRUCTURED},{INFO}}}}}',
        f'{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","content":{SAID},{INFO}}}}}',
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
        f'"text":"nothing matches fail"}}],"isError":true,{INFO}}}}}',
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text",'
        '"text":"Invalid arguments for tool summarize: 3 is not of type \\"string\\" at '
        f'/query"}}],"isError":true,{INFO}}}}}',
    ],
    LEGACY: [
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"search_customers","description":'
        f'"Find customers by name.",{INPUT},"outputSchema":{SCHEMA}}},{{"name":"summarize",'
        f'"description":"Say what was found.",{INPUT}}}]}}}}',
        f'{{"jsonrpc":"2.0","id":1,"result":{{"content":{MIRROR},"structuredContent":{STRUCTURED}}}}}',
        f'{{"jsonrpc":"2.0","id":1,"result":{{"content":{SAID}}}}}',
        '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"nothing matches '
        'fail"}],"isError":true}}',
        '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Invalid arguments '
        'for tool summarize: 3 is not of type \\"string\\" at /query"}],"isError":true}}',
    ],
}
ASKED = [
    ("tools/list", {}),
    ("tools/call", _call("search_customers", "Globex")),
    ("tools/call", _call("summarize", "Globex")),
    ("tools/call", _call("summarize", "fail")),
    ("tools/call", _call("summarize", 3)),
]


def test_2026_07_28_answers_are_unchanged_beside_the_draft() -> None:
    server = _server()
    answers = [wire(server, method, params, MODERN) for method, params in ASKED]
    assert answers == BEFORE[MODERN]


def test_2025_11_25_answers_are_unchanged_beside_the_draft() -> None:
    server = _server()

    assert legacy_answers(server, ASKED) == BEFORE[LEGACY]
    assert server.answer_checks is not None and server.answer_checks.invalid == []


def test_requested_outputs_are_not_read_before_the_draft() -> None:
    """2026-07-28 defines no ``requestedOutputs``: its params model refuses it, as any
    unknown param, or it is ignored; either way the answer keeps the legacy shape."""
    server = _server()
    params = _call("summarize", "Globex", ("assistant", "structured"))
    answer = json.loads(wire(server, "tools/call", params, MODERN))
    assert "outputs" not in answer.get("result", {})


# -- the draft ----------------------------------------------------------------------------


def test_the_draft_lists_each_tool_with_its_variants() -> None:
    unwrapped = json.loads(SCHEMA)
    assert wire(_server(), "tools/list", {}) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tools":[{"name":'
        f'"search_customers","description":"Find customers by name.",{INPUT},'
        '"outputVariants":[{"audience":"assistant","format":"content"},{"audience":"assistant",'
        f'"format":"structured","schema":{json.dumps(unwrapped, separators=(",", ":"))}}}]}},'
        f'{{"name":"summarize","description":"Say what was found.",{INPUT},"outputVariants":'
        '[{"audience":"assistant","format":"content"}]}],"ttlMs":0,"cacheScope":"private",'
        f"{INFO}}}}}"
    )


def test_a_wrapped_return_type_is_declared_and_answered_unwrapped() -> None:
    """2026-07-28 wraps a list in ``{"result": ...}`` (its structuredContent is an
    object); the draft's structured output is any JSON value, so it is the list itself."""
    server = Server("w", "1.0", versions=[DRAFT, MODERN], spec=Spec(check_answers=True))

    @server.tool
    def regions() -> list[str]:
        return ["NA", "EMEA"]

    listed = json.loads(wire(server, "tools/list", {}))["result"]["tools"][0]
    assert listed["outputVariants"][1] == {
        "audience": "assistant",
        "format": "structured",
        "schema": {"items": {"type": "string"}, "type": "array"},
    }
    params = {
        "name": "regions",
        "requestedOutputs": [{"audience": "assistant", "format": "structured"}],
    }
    outputs = json.loads(wire(server, "tools/call", params))["result"]["outputs"]
    assert outputs == [
        {"audience": "assistant", "format": "structured", "structuredContent": ["NA", "EMEA"]}
    ]
    legacy = json.loads(wire(server, "tools/call", {"name": "regions"}, MODERN))["result"]
    assert legacy["structuredContent"] == {"result": ["NA", "EMEA"]}


def test_without_requested_outputs_the_draft_answers_assistant_content() -> None:
    server = _server()
    assert wire(server, "tools/call", _call("search_customers", "Globex")) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        f'"assistant","format":"content","content":{MIRROR}}}],{INFO}}}}}'
    )
    assert wire(server, "tools/call", _call("summarize", "Globex")) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        f'"assistant","format":"content","content":{SAID}}}],{INFO}}}}}'
    )


@pytest.mark.parametrize(
    ("selectors", "outputs"),
    [
        (
            [("assistant", "content")],
            f'[{{"audience":"assistant","format":"content","content":{MIRROR}}}]',
        ),
        (
            [("assistant", "structured")],
            f'[{{"audience":"assistant","format":"structured","structuredContent":{STRUCTURED}}}]',
        ),
        (
            [("assistant", "structured"), ("assistant", "content")],
            f'[{{"audience":"assistant","format":"structured","structuredContent":{STRUCTURED}}},'
            f'{{"audience":"assistant","format":"content","content":{MIRROR}}}]',
        ),
    ],
)
def test_each_requested_output_is_answered_once_in_the_order_asked(
    selectors: list[tuple[str, str]], outputs: str
) -> None:
    answer = wire(_server(), "tools/call", _call("search_customers", "Globex", *selectors))
    assert answer == (
        f'{{"jsonrpc":"2.0","id":1,"result":{{"resultType":"complete","outputs":{outputs},{INFO}}}}}'
    )


@pytest.mark.parametrize(
    ("tool", "selectors", "message"),
    [
        (
            "search_customers",
            [("programmatic", "structured")],
            "Tool search_customers declares no output programmatic/structured "
            "(it declares assistant/content, assistant/structured)",
        ),
        (
            "summarize",
            [("assistant", "content"), ("assistant", "structured")],
            "Tool summarize declares no output assistant/structured "
            "(it declares assistant/content)",
        ),
        (
            "search_customers",
            [("io.modelcontextprotocol/ui", "structured")],
            "Tool search_customers declares no output io.modelcontextprotocol/ui/structured "
            "(it declares assistant/content, assistant/structured)",
        ),
        (
            "search_customers",
            [("assistant", "content"), ("assistant", "content")],
            "requestedOutputs names assistant/content more than once",
        ),
        ("search_customers", [], "requestedOutputs names no output"),
    ],
)
def test_a_bad_requested_outputs_is_invalid_params_and_the_tool_never_runs(
    tool: str, selectors: list[tuple[str, str]], message: str
) -> None:
    ran: list[str] = []
    server = _server(ran)
    params = {
        "name": tool,
        "arguments": {"query": "Globex"},
        "requestedOutputs": [{"audience": a, "format": f} for a, f in selectors],
    }
    assert wire(server, "tools/call", params) == (
        f'{{"jsonrpc":"2.0","id":1,"error":{{"code":-32602,"message":"{message}"}}}}'
    )
    assert ran == []


def test_a_malformed_selector_is_refused_by_the_draft_params_model() -> None:
    server = _server()
    params = {"name": "summarize", "requestedOutputs": [{"audience": "assistant"}]}
    answer = json.loads(wire(server, "tools/call", params))
    assert answer["error"]["code"] == -32602


def test_a_failed_call_answers_the_outputs_it_has_and_else_an_error() -> None:
    server = _server()
    failed = wire(server, "tools/call", _call("summarize", "fail"))
    assert failed == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        '"assistant","format":"content","content":[{"type":"text","text":"nothing matches '
        f'fail"}}]}}],"isError":true,{INFO}}}}}'
    )
    invalid = wire(server, "tools/call", _call("search_customers", 3, ("assistant", "structured")))
    assert invalid == (
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Tool search_customers '
        'failed: Invalid arguments for tool search_customers: 3 is not of type \\"string\\" '
        'at /query"}}'
    )


def test_a_structured_tool_error_is_the_structured_output_of_a_failure() -> None:
    server = Server("e", "1.0", versions=[DRAFT], spec=Spec(check_answers=True))

    @server.tool
    def lookup() -> Customers:
        raise ToolError("no such customer", structured_content={"code": "missing"})

    params = {
        "name": "lookup",
        "requestedOutputs": [
            {"audience": "assistant", "format": "structured"},
            {"audience": "assistant", "format": "content"},
        ],
    }
    result = json.loads(wire(server, "tools/call", params))["result"]
    assert result["outputs"] == [
        {"audience": "assistant", "format": "structured", "structuredContent": {"code": "missing"}},
        {
            "audience": "assistant",
            "format": "content",
            "content": [{"type": "text", "text": "no such customer"}],
        },
    ]
    assert result["isError"] is True


def test_the_seps_conversational_and_structured_examples() -> None:
    """SEP-3279, "Conversational client" and "Structured model input": the request as
    the SEP writes it; the answer valid for the draft's models, in the shape shown."""
    server = _server()
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "search_customers",
            "arguments": {"query": "Globex"},
            "requestedOutputs": [{"audience": "assistant", "format": "content"}],
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-12-01",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    reply = asyncio.run(server.handle(request))
    assert reply.response is not None
    result = reply.response["result"]
    draft = REVISIONS.of(DRAFT)
    draft.models.CallToolResult.model_validate(result)
    assert [(o["audience"], o["format"]) for o in result["outputs"]] == [("assistant", "content")]
    assert "content" not in result and "structuredContent" not in result
    request["params"]["requestedOutputs"] = [{"audience": "assistant", "format": "structured"}]
    result = asyncio.run(server.handle(request)).response["result"]  # type: ignore[index]
    (output,) = result["outputs"]
    assert output["structuredContent"] == json.loads(STRUCTURED)
    assert server.answer_checks is not None and server.answer_checks.invalid == []


def test_an_exception_a_tool_raises_is_a_failed_output_under_the_draft() -> None:
    server = Server("x", "1.0", versions=[DRAFT, MODERN], spec=Spec(check_answers=True))

    @server.tool
    def crash() -> str:
        raise RuntimeError("disk full")

    assert wire(server, "tools/call", {"name": "crash"}) == (
        '{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","outputs":[{"audience":'
        '"assistant","format":"content","content":[{"type":"text","text":"disk full"}]}],'
        '"isError":true,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x",'
        '"version":"1.0"}}}}'
    )
    legacy = json.loads(wire(server, "tools/call", {"name": "crash"}, MODERN))["result"]
    assert legacy["content"] == [{"type": "text", "text": "disk full"}]
    assert legacy["isError"] is True


def test_result_limit_cuts_the_drafts_content_outputs_and_drops_structured_ones() -> None:
    from snodo.middleware import ResultLimit

    server = Server("big", "1.0", versions=[DRAFT, MODERN], spec=Spec(check_answers=True))
    server.middleware(ResultLimit(1000))

    @server.tool
    def numbers(count: int) -> dict[str, list[int]]:
        return {"values": list(range(count))}

    both = [
        {"audience": "assistant", "format": "content"},
        {"audience": "assistant", "format": "structured"},
    ]
    params = {"name": "numbers", "arguments": {"count": 2000}, "requestedOutputs": both}
    result = json.loads(wire(server, "tools/call", params))["result"]
    (output,) = result["outputs"]
    assert (output["audience"], output["format"]) == ("assistant", "content")
    assert output["content"][0]["text"].endswith("this server gives at most 1000]")
    assert result["isError"] is True
    assert len(json.dumps(result).encode()) < 1100
    params["requestedOutputs"] = both[1:]
    refused = json.loads(wire(server, "tools/call", params))["error"]
    assert refused["code"] == -32603
    assert refused["message"].startswith("the tool's result is too large: [truncated")
