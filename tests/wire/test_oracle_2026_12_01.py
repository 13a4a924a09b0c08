"""``snodo_wire_2026_12_01``, the draft revision SEP-3279 describes (Negotiated Tool
Result Variants), against JSON Schema 2020-12 over the project's translation of the
SEP's types (``schema/2026-12-01/translation.json`` applied to 2026-07-28's schema).

The SEP's JSON examples (at the pinned commit) round-trip through their models
unchanged, and the schema and the models agree on each; the shapes the SEP forbids are
refused by both. ``test_oracle_built.py`` covers every definition's built instances.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import snodo_wire_2026_12_01 as wire
from generator.revisions import SCHEMA_ROOT, load_revision
from snodo_wire_2026_12_01 import protocol
from tests.support.oracle import Oracle
from tests.support.packages import raw
from tests.support.typed_json import tagged

REVISION = load_revision(SCHEMA_ROOT / "2026-12-01")
RAW: dict[str, Any] = raw(REVISION)

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-12-01",
    "io.modelcontextprotocol/clientCapabilities": {},
}
APPS_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-12-01",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
    },
}
ASSISTANT_CONTENT = {"audience": "assistant", "format": "content"}
UI_STRUCTURED = {"audience": "io.modelcontextprotocol/ui", "format": "structured"}
SEARCH = {"name": "search_customers", "arguments": {"query": "Globex"}}


def _asking(*selectors: dict[str, str], meta: dict[str, Any] = META) -> dict[str, Any]:
    return {**SEARCH, "requestedOutputs": list(selectors), "_meta": meta}


# (definition, message): the SEP's requests as sent and results as answered ("Core
# examples", "MCP Apps integration"); a params example the SEP shows without `_meta` is
# given the `_meta` every modern request carries.
EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    (
        "CallToolRequest",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": _asking(ASSISTANT_CONTENT),
        },
    ),
    (
        "CallToolResult",
        {
            "resultType": "complete",
            "outputs": [
                {
                    **ASSISTANT_CONTENT,
                    "content": [
                        {
                            "type": "text",
                            "text": "I found 37 Globex customer records. The three most"
                            " recently active accounts are Globex Retail, Globex Energy,"
                            " and Globex Labs.",
                        }
                    ],
                }
            ],
        },
    ),
    ("CallToolRequestParams", _asking({"audience": "programmatic", "format": "structured"})),
    (
        "CallToolResult",
        {
            "resultType": "complete",
            "outputs": [
                {
                    "audience": "programmatic",
                    "format": "structured",
                    "structuredContent": {
                        "items": [
                            {"customerId": "cust_1042", "displayName": "Globex Retail"},
                            {"customerId": "cust_2088", "displayName": "Globex Energy"},
                        ],
                        "nextCursor": "eyJvZmZzZXQiOjJ9",
                    },
                }
            ],
        },
    ),
    ("CallToolRequestParams", _asking({"audience": "assistant", "format": "structured"})),
    (
        "CallToolRequestParams",
        {
            "name": "generate_images",
            "arguments": {"prompt": "A sunrise over Puget Sound", "count": 2},
            "requestedOutputs": [{"audience": "user", "format": "content"}],
            "_meta": META,
        },
    ),
    (
        "CallToolResult",
        {
            "resultType": "complete",
            "outputs": [
                {
                    "audience": "user",
                    "format": "content",
                    "content": [
                        {"type": "image", "data": "...", "mimeType": "image/png"},
                        {"type": "image", "data": "...", "mimeType": "image/webp"},
                    ],
                }
            ],
        },
    ),
    ("CallToolRequestParams", _asking({"audience": "user", "format": "structured"})),
    (
        "CallToolResult",
        {
            "resultType": "complete",
            "outputs": [
                {
                    "audience": "user",
                    "format": "structured",
                    "structuredContent": [
                        {"displayName": "Globex Retail", "region": "NA"},
                        {"displayName": "Globex Energy", "region": "EMEA"},
                    ],
                }
            ],
        },
    ),
    ("CallToolRequestParams", _asking(ASSISTANT_CONTENT, UI_STRUCTURED, meta=APPS_META)),
    (
        "CallToolResult",
        {
            "resultType": "complete",
            "outputs": [
                {
                    **ASSISTANT_CONTENT,
                    "content": [
                        {
                            "type": "text",
                            "text": "I found 37 Globex customer records and displayed them"
                            " in an interactive table.",
                        }
                    ],
                },
                {
                    **UI_STRUCTURED,
                    "structuredContent": {
                        "columns": ["displayName", "region", "lastActivity"],
                        "rows": [
                            {
                                "customerId": "cust_1042",
                                "displayName": "Globex Retail",
                                "region": "NA",
                                "lastActivity": "2026-08-17T21:10:00Z",
                            }
                        ],
                        "facets": {"region": ["NA", "EMEA", "APAC"]},
                    },
                },
            ],
            "_meta": {
                "io.modelcontextprotocol/ui": {
                    "datasetVersion": "v18",
                    "continuationToken": "view_opaque_token",
                }
            },
        },
    ),
    (
        "Tool",
        {
            "name": "refresh_dashboard",
            "inputSchema": {"type": "object"},
            "outputVariants": [
                ASSISTANT_CONTENT,
                {
                    **UI_STRUCTURED,
                    "schema": {
                        "type": "object",
                        "properties": {"datasetVersion": {"type": "string"}},
                        "required": ["datasetVersion"],
                    },
                },
            ],
            "_meta": {"ui": {"resourceUri": "ui://dashboard/index.html", "visibility": ["app"]}},
        },
    ),
]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(RAW, "snodo_wire_2026_12_01")


def test_the_package_is_the_draft_revision() -> None:
    assert protocol.LATEST_PROTOCOL_VERSION == "2026-12-01"
    assert protocol.SCHEMA_URL.endswith("seps/3279-negotiated-tool-result-variants.md")
    assert REVISION.pin.translated, "the project's translation, committed beside its pin"
    assert REVISION.overlay.served is False  # opted into by version while the SEP is a draft
    assert REVISION.overlay.unfilled == ()  # the runtime fills outputs (server/tool_encoders)


@pytest.mark.parametrize(
    ("name", "message"), EXAMPLES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(EXAMPLES)]
)
def test_the_seps_examples_round_trip(name: str, message: dict[str, Any], oracle: Oracle) -> None:
    assert oracle.schema_accepts(name, message)
    model: type[BaseModel] = getattr(wire, name)
    loaded = model.model_validate_json(json.dumps(message))
    assert tagged(json.loads(loaded.model_dump_json(by_alias=True, exclude_unset=True))) == (
        tagged(message)
    )
    checked, disagreements = oracle.disagreements(name, message)
    assert checked >= 1
    assert not disagreements, disagreements


@pytest.mark.parametrize(
    ("name", "message"),
    [
        # the 2026-07-28 shapes: content and structuredContent are not outputs
        ("CallToolResult", {"resultType": "complete", "content": []}),
        ("Tool", {"name": "t", "inputSchema": {"type": "object"}}),
        # an output's payload must match its format
        (
            "CallToolResult",
            {"outputs": [{**ASSISTANT_CONTENT, "structuredContent": {"a": 1}}]},
        ),
        ("CallToolResult", {"outputs": [{"audience": "user", "format": "structured"}]}),
        ("CallToolRequestParams", {**SEARCH, "requestedOutputs": [{"audience": "user"}]}),
        (
            "CallToolRequestParams",
            {**SEARCH, "requestedOutputs": [{"audience": "user", "format": "html"}]},
        ),
    ],
    ids=["old-result", "no-variants", "content-as-structured", "no-payload", "no-format", "html"],
)
def test_what_the_sep_forbids_is_refused_by_both(
    name: str, message: dict[str, Any], oracle: Oracle
) -> None:
    message = {**message, "_meta": META} if name == "CallToolRequestParams" else message
    assert not oracle.schema_accepts(name, message)
    assert not oracle.model_accepts(name, message)
