"""The document schemas (a Server Card, the registry's server.json, a bundle's manifest)
against their raw pinned files: the Server Card's published examples round-trip and its
invalid ones are refused, and on literal documents and every near-miss mutation of them
the generated models, JSON Schema over the raw file (in its own draft) and JSON Schema
over the generator's rewrite of it make the same decision.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from generator.prepass import prepare
from generator.revisions import Revision
from generator.source import SchemaSourceError, locate_schema
from tests.support.oracle import mutations
from tests.support.packages import documents, raw

BY_NAME = {revision.pin.revision: revision for revision in documents()}
CARD = BY_NAME["server-card"]
CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
REGISTRY_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

DOCUMENTS: dict[str, list[dict[str, Any]]] = {
    "server-card": [
        {
            "$schema": CARD_SCHEMA,
            "name": "io.github.example/weather",
            "version": "1.0.0",
            "description": "Weather for the user's city.",
            "title": "Weather",
            "websiteUrl": "https://example.com/weather",
            "icons": [{"src": "https://example.com/icon.png", "sizes": ["48x48"]}],
            "repository": {"url": "https://github.com/example/weather", "source": "github"},
            "remotes": [
                {
                    "type": "streamable-http",
                    "url": "https://mcp.example.com/mcp",
                    "supportedProtocolVersions": ["2026-07-28", "2025-11-25"],
                    "headers": [{"name": "Authorization", "isRequired": True, "isSecret": True}],
                }
            ],
        }
    ],
    "server-json": [
        {
            "$schema": REGISTRY_SCHEMA,
            "name": "io.github.example/weather",
            "version": "1.0.0",
            "description": "Weather for the user's city.",
            "repository": {"url": "https://github.com/example/weather", "source": "github"},
            "packages": [
                {
                    "registryType": "pypi",
                    "identifier": "weather-mcp",
                    "version": "1.0.0",
                    "transport": {"type": "stdio"},
                    "runtimeHint": "uvx",
                    "environmentVariables": [{"name": "API_KEY", "isSecret": True}],
                    "packageArguments": [{"type": "positional", "valueHint": "city"}],
                }
            ],
            "remotes": [
                {
                    "type": "streamable-http",
                    "url": "https://{host}/mcp",
                    "variables": {"host": {"default": "mcp.example.com"}},
                }
            ],
        }
    ],
    "mcpb-manifest": [
        {
            "manifest_version": "0.3",
            "name": "weather",
            "version": "1.0.0",
            "description": "Weather for the user's city.",
            "author": {"name": "Example"},
            "server": {
                "type": "python",
                "entry_point": "server/weather.py",
                "mcp_config": {
                    "command": "python3",
                    "args": ["${__dirname}/server/weather.py"],
                    "env": {"PYTHONPATH": "${__dirname}/server/lib"},
                },
            },
            "tools": [{"name": "forecast", "description": "Weather for the user's city."}],
            "user_config": {"units": {"type": "string", "title": "Units", "description": "C or F"}},
        }
    ],
}
"""Literal documents using most of what each schema defines."""


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)  # type: ignore[no-any-return]


def _deciders(revision: Revision) -> tuple[Any, Any, TypeAdapter[Any]]:
    """The raw schema's validator, the rewritten schema's, and the root model's."""
    document = revision.overlay.document
    assert document is not None
    original = raw(revision)
    if not {"$ref", "type", "properties"} & set(original):  # no root: the overlay names it
        original = {**original, "$ref": f"#/$defs/{document.root}"}
    prepared = prepare(raw(revision), revision.overlay)
    rewritten = {"$defs": prepared["$defs"], "$ref": f"#/$defs/{document.root}"}
    model = getattr(__import__(revision.package), document.root)
    return _validator(original), _validator(rewritten), TypeAdapter(model)


def _model_accepts(adapter: TypeAdapter[Any], instance: Any) -> bool:
    try:
        adapter.validate_json(json.dumps(instance))
    except ValidationError:
        return False
    return True


def _card_examples(kind: str) -> list[Path]:
    """The card's published examples of ``kind``; none where the schema is not at hand
    (``raw`` says why, in the test that needs the schema)."""
    try:
        folder = locate_schema(CARD.pin)[0].parent
    except SchemaSourceError:
        return []
    return sorted((folder / "examples" / "ServerCard" / kind).glob("*.json"))


def test_the_server_card_publishes_valid_and_invalid_examples() -> None:
    raw(CARD)  # skips, saying why, where the card's schema is not at hand
    assert [p.name for p in _card_examples("valid")] == ["minimal.json", "templated-remote.json"]
    assert len(_card_examples("invalid")) == 5


@pytest.mark.parametrize("path", _card_examples("valid"), ids=lambda p: p.name)
def test_a_valid_card_example_round_trips(path: Path) -> None:
    from snodo_wire_server_card import ServerCard

    text = path.read_text(encoding="utf-8")
    card = ServerCard.model_validate_json(text)
    assert json.loads(card.model_dump_json()) == json.loads(text)
    original, rewritten, _ = _deciders(CARD)
    assert original.is_valid(json.loads(text)) and rewritten.is_valid(json.loads(text))


@pytest.mark.parametrize("path", _card_examples("invalid"), ids=lambda p: p.name)
def test_an_invalid_card_example_is_refused(path: Path) -> None:
    from snodo_wire_server_card import ServerCard

    original, rewritten, _ = _deciders(CARD)
    document = json.loads(path.read_text(encoding="utf-8"))
    with pytest.raises(ValidationError):
        ServerCard.model_validate(document)
    assert not original.is_valid(document)
    assert not rewritten.is_valid(document)


CASES = [
    (name, index, label, instance)
    for name, literals in DOCUMENTS.items()
    for index, literal in enumerate(literals)
    for label, instance in [("as written", literal), *mutations(literal)]
]


@pytest.mark.parametrize(
    ("name", "instance"),
    [(name, instance) for name, _, _, instance in CASES],
    ids=[f"{name}/{index}/{label}" for name, index, label, _ in CASES],
)
def test_models_and_both_schemas_agree(name: str, instance: Any) -> None:
    original, rewritten, adapter = _deciders(BY_NAME[name])
    by_raw = bool(original.is_valid(instance))
    assert rewritten.is_valid(instance) == by_raw, "the rewrite changed what is valid"
    assert _model_accepts(adapter, instance) == by_raw


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_each_literal_document_is_valid(name: str) -> None:
    original, _, adapter = _deciders(BY_NAME[name])
    for literal in DOCUMENTS[name]:
        assert original.is_valid(literal)
        dumped = json.loads(adapter.dump_json(adapter.validate_python(literal)))
        assert dumped == literal, "a document does not survive its model"


def test_the_document_constants_are_the_schemas() -> None:
    from snodo_wire_mcpb import McpbManifest
    from snodo_wire_mcpb.protocol import MANIFEST_VERSION
    from snodo_wire_server_card.protocol import MEDIA_TYPE, SCHEMA_URI
    from snodo_wire_server_json.protocol import SCHEMA_URI as REGISTRY_URI

    assert SCHEMA_URI == CARD_SCHEMA
    assert MEDIA_TYPE == "application/mcp-server-card+json"
    assert REGISTRY_URI == raw(BY_NAME["server-json"])["$id"] == REGISTRY_SCHEMA
    manifest = raw(BY_NAME["mcpb-manifest"])["properties"]["manifest_version"]
    assert manifest["const"] == MANIFEST_VERSION
    assert McpbManifest.model_fields["manifest_version"].annotation is not None


def test_a_rule_split_into_classes_fails_loudly_once_upstream_changes_it() -> None:
    from generator.overlay import OverlayError

    registry = BY_NAME["server-json"]
    changed = json.loads(json.dumps(raw(registry)))
    rule = changed["definitions"]["PositionalArgument"]["allOf"][1]
    rule["anyOf"].append({"required": ["isRepeated"]})
    with pytest.raises(OverlayError, match=r"\[split_required\] PositionalArgument has 3 rules"):
        prepare(changed, registry.overlay)
    del rule["anyOf"]
    with pytest.raises(OverlayError, match="no longer an allOf part of required lists"):
        prepare(changed, registry.overlay)
