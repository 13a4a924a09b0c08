"""``snodo_wire_apps`` (MCP Apps, io.modelcontextprotocol/ui) against JSON Schema 2020-12
over the pinned schema of the extension's npm package.

As for the 2025-11-25 package: instances built from every definition (required members
only, every member, each union branch) and literal messages of the host-app protocol
written from the extension's specification (apps-2026-01-26.mdx); on each, and on every
near-miss mutation, the models and the schema must decide alike. The schema file names
a definition it does not carry (``__schema0``); the oracle reads it as the overlay does,
any JSON value.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import snodo_wire_apps as wire
from snodo_wire_apps import protocol, tables
from tests.support.instances import Builder
from tests.support.oracle import Oracle
from tests.support.paths import schema_dir
from tests.support.typed_json import tagged

RAW: dict[str, Any] = json.loads((schema_dir().parent / "ext-apps" / "schema.json").read_text())


def _open(node: Any) -> Any:
    """A closed object schema, opened: a branch of an intersection."""
    if isinstance(node, dict):
        return {k: _open(v) for k, v in node.items() if k != "additionalProperties"}
    if isinstance(node, list):
        return [_open(item) for item in node]
    return node


def _optional_style_keys(node: Any) -> Any:
    """The schema as the models read it (DOCUMENTED_DIVERGENCES): a record of style
    variables (``propertyNames``) requires none of its keys, and the branches of an
    ``allOf`` (a TypeScript intersection) are open objects."""
    if isinstance(node, dict):
        kept = {k: _optional_style_keys(v) for k, v in node.items()}
        if "propertyNames" in kept:
            kept.pop("required", None)
        if "allOf" in kept:
            kept["allOf"] = _open(kept["allOf"])
        return kept
    if isinstance(node, list):
        return [_optional_style_keys(item) for item in node]
    return node


READ = _optional_style_keys({**RAW, "$defs": {**RAW["$defs"], "__schema0": {}}})
BUILT = [
    (name, label, instance)
    for name in sorted(RAW["$defs"])
    for label, instance in Builder(READ["$defs"]).cases(name)
]
DOCUMENTED_DIVERGENCES = {
    "style keys are optional": "McpUiStyles requires every one of its 76 CSS variables, an "
    "artefact of generating it from Record<K, string | undefined>; its own description (and "
    "the specification) says hosts may send any subset, which is what the models accept.",
    "container dimensions": "McpUiHostContext.containerDimensions is an allOf of closed "
    "objects ({height} or {maxHeight}, and {width} or {maxWidth}), which nothing but {} "
    "satisfies; the TypeScript intersection it comes from means one of each, as the models "
    "read it.",
}

TOOL_RESULT = {
    "content": [{"type": "text", "text": "Sunny, 21°C"}],
    "structuredContent": {"temperature": 21},
}
MESSAGES: list[tuple[str, dict[str, Any]]] = [
    (
        "McpUiInitializeRequest",
        {
            "method": "ui/initialize",
            "params": {
                "protocolVersion": "2026-01-26",
                "appInfo": {"name": "weather-view", "version": "1.0.0"},
                "appCapabilities": {"availableDisplayModes": ["inline", "fullscreen"]},
            },
        },
    ),
    (
        "McpUiToolInputNotification",
        {
            "method": "ui/notifications/tool-input",
            "params": {"arguments": {"city": "Oslo"}},
        },
    ),
    (
        "McpUiToolResultNotification",
        {"method": "ui/notifications/tool-result", "params": TOOL_RESULT},
    ),
    (
        "McpUiOpenLinkRequest",
        {
            "method": "ui/open-link",
            "params": {"url": "https://example.com/forecast"},
        },
    ),
    (
        "McpUiMessageRequest",
        {
            "method": "ui/message",
            "params": {"role": "user", "content": [{"type": "text", "text": "Plan a picnic"}]},
        },
    ),
    (
        "McpUiSizeChangedNotification",
        {
            "method": "ui/notifications/size-changed",
            "params": {"width": 400, "height": 300},
        },
    ),
    (
        "McpUiResourceTeardownRequest",
        {"method": "ui/resource-teardown", "params": {}},
    ),
    ("McpUiToolMeta", {"resourceUri": "ui://weather/view.html", "visibility": ["model", "app"]}),
    (
        "McpUiResourceMeta",
        {
            "csp": {"connectDomains": ["https://api.example.com"]},
            "permissions": {"clipboardWrite": {}},
            "prefersBorder": True,
        },
    ),
    ("McpUiClientCapabilities", {"mimeTypes": ["text/html;profile=mcp-app"]}),
]


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(READ, "snodo_wire_apps")


def test_the_package_names_the_extension() -> None:
    assert protocol.EXTENSION_ID == "io.modelcontextprotocol/ui"
    assert len(RAW["$defs"]) == 39
    assert {name for name, _, _ in BUILT} == set(RAW["$defs"])
    assert sorted(tables.METHODS) == [
        "ui/download-file",
        "ui/initialize",
        "ui/message",
        "ui/open-link",
        "ui/request-display-mode",
        "ui/resource-teardown",
    ]


@pytest.mark.parametrize(
    ("name", "instance"),
    [(name, instance) for name, _, instance in BUILT],
    ids=[f"{name}/{label}" for name, label, _ in BUILT],
)
def test_built_instances_agree_with_json_schema(name: str, instance: Any, oracle: Oracle) -> None:
    assert oracle.schema_accepts(name, instance), "the builder made an invalid instance"
    assert oracle.model_accepts(name, instance)
    checked, disagreements = oracle.disagreements(name, instance)
    assert checked > 0 or instance in ({}, [])
    assert not disagreements, (
        f"undocumented divergence from JSON Schema (known: {sorted(DOCUMENTED_DIVERGENCES)})",
        disagreements,
    )


@pytest.mark.parametrize(
    ("name", "message"), MESSAGES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(MESSAGES)]
)
def test_literal_messages_round_trip_and_agree(
    name: str, message: dict[str, Any], oracle: Oracle
) -> None:
    assert oracle.schema_accepts(name, message)
    model: type[BaseModel] = getattr(wire, name)
    loaded = model.model_validate_json(json.dumps(message))
    assert tagged(json.loads(loaded.model_dump_json())) == tagged(message)
    checked, disagreements = oracle.disagreements(name, message)
    assert checked >= 1
    assert not disagreements


def test_documented_divergences_are_real(oracle: Oracle) -> None:
    subset = {"--color-background-primary": "#fff"}
    assert not Oracle(RAW, "snodo_wire_apps").schema_accepts("McpUiStyles", subset), (
        "the published schema requires every key"
    )
    assert oracle.model_accepts("McpUiStyles", subset)
    sized = {"containerDimensions": {"height": 300, "maxWidth": 800}}
    assert not Oracle(RAW, "snodo_wire_apps").schema_accepts("McpUiHostContext", sized)
    assert oracle.model_accepts("McpUiHostContext", sized)


def test_requests_route_to_their_models() -> None:
    for name, message in MESSAGES:
        if "id" in message and message["method"] in tables.METHODS:
            assert tables.METHODS[message["method"]].request.__name__ == name
