"""``snodo_wire_skills`` (the Skills extension, io.modelcontextprotocol/skills) against
JSON Schema 2020-12 over the project's translation of the specification's types
(``schema/ext-skills/schema.json``).

Instances built from every definition (required members only, every member, each union
branch) and the JSON examples of the specification (skills.mdx at the pinned commit):
on each, and on every near-miss mutation, the models and the schema must decide alike,
and each example round-trips through its model unchanged.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import snodo_wire_skills as wire
from generator.revisions import SCHEMA_ROOT, load_revision
from snodo_wire_skills import protocol, tables
from tests.support.instances import Builder
from tests.support.oracle import Oracle
from tests.support.packages import raw
from tests.support.typed_json import tagged

REVISION = load_revision(SCHEMA_ROOT / "ext-skills")
RAW: dict[str, Any] = raw(REVISION)
BUILT = [
    (name, label, instance)
    for name in sorted(RAW["$defs"])
    for label, instance in Builder(RAW["$defs"]).cases(name)
]

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
GIT_WORKFLOW = {
    "uri": "skill://git-workflow/SKILL.md",
    "frontmatter": {
        "name": "git-workflow",
        "description": "Follow this team's Git conventions for branching and commits",
    },
    "resources": [
        {"uri": "skill://git-workflow/SKILL.md", "digest": "sha256:a1b2c3d4...", "size": 2314}
    ],
}
REFUNDS = {
    "uri": "skill://acme/billing/refunds/SKILL.md",
    "frontmatter": {
        "name": "refunds",
        "description": "Process customer refund requests per company policy",
        "license": "Apache-2.0",
    },
    "resources": [
        {
            "uri": "skill://acme/billing/refunds/SKILL.md",
            "digest": "sha256:b2c3d4e5...",
            "size": 3871,
        },
        {
            "uri": "skill://acme/billing/refunds/examples/email.md",
            "digest": "sha256:c3d4e5f6...",
            "size": 962,
        },
    ],
}
DAILY = {
    "uri": "skill://reports/daily/SKILL.md",
    "frontmatter": {
        "name": "daily",
        "description": "Assemble today's operational report from live data",
    },
    "resources": "dynamic",
}
PDF = {
    "uri": "skill://pdf-processing/SKILL.md",
    "frontmatter": {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents",
        "metadata": {"version": "2.1.0"},
    },
    "resources": [
        {"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:d5e6f7a8...", "size": 5120},
        {
            "uri": "skill://pdf-processing/references/FORMS.md",
            "digest": "sha256:e6f7a8b9...",
            "size": 18433,
        },
        {
            "uri": "skill://pdf-processing/scripts/extract.py",
            "digest": "sha256:f7a8b9c0...",
            "size": 4096,
        },
    ],
}
CACHE = {"ttlMs": 300000, "cacheScope": "public"}

# (definition, message): the specification's requests as sent, and its results (the
# `result` of each response it shows).
EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    (
        "GetSkillRequest",
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "skills/get",
            "params": {"uri": "skill://pdf-processing/SKILL.md"},
        },
    ),
    (
        "ReadResourceDirectoryRequest",
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "resources/directory/read",
            "params": {"uri": "skill://pdf-processing/templates"},
        },
    ),
    (
        "ListSkillsResult",
        {"resultType": "complete", "skills": [GIT_WORKFLOW, REFUNDS, DAILY], **CACHE},
    ),
    ("GetSkillResult", {"resultType": "complete", "skill": PDF, **CACHE}),
    (
        "ReadResourceDirectoryResult",
        {
            "resultType": "complete",
            "resources": [
                {
                    "uri": "skill://pdf-processing/templates/invoice.md",
                    "name": "invoice.md",
                    "mimeType": "text/markdown",
                },
                {
                    "uri": "skill://pdf-processing/templates/regional",
                    "name": "regional",
                    "mimeType": "inode/directory",
                },
            ],
        },
    ),
    ("SkillsExtensionCapability", {"directoryRead": True}),
    ("SkillsExtensionCapability", {}),
]
LIST_REQUEST = {"jsonrpc": "2.0", "id": 4, "method": "skills/list", "params": {}}


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(RAW, "snodo_wire_skills")


def test_the_package_names_the_extension_and_its_methods() -> None:
    assert protocol.EXTENSION_ID == "io.modelcontextprotocol/skills"
    assert protocol.LATEST_PROTOCOL_VERSION == "2026-07-28"
    assert (protocol.SKILL_FILE, protocol.SKILL_MIME_TYPE) == ("SKILL.md", "text/markdown")
    assert protocol.DIRECTORY_MIME_TYPE == "inode/directory"
    assert {m: s.cacheable for m, s in tables.METHODS.items()} == {
        "resources/directory/read": False,
        "skills/get": True,
        "skills/list": True,
    }
    assert tables.METHODS["skills/get"].params is wire.GetSkillRequestParams
    assert {name for name, _, _ in BUILT} == set(RAW["$defs"])


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
    assert not disagreements, disagreements


@pytest.mark.parametrize(
    ("name", "message"), EXAMPLES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(EXAMPLES)]
)
def test_the_specifications_examples_round_trip(
    name: str, message: dict[str, Any], oracle: Oracle
) -> None:
    assert oracle.schema_accepts(name, message)
    model: type[BaseModel] = getattr(wire, name)
    loaded = model.model_validate_json(json.dumps(message))
    assert tagged(json.loads(loaded.model_dump_json())) == tagged(message)
    checked, disagreements = oracle.disagreements(name, message)
    assert checked >= 1 or message == {}
    assert not disagreements


def test_the_listing_request_example_omits_the_modern_meta(oracle: Oracle) -> None:
    """skills/list extends PaginatedRequest, whose params 2026-07-28 gives a required
    ``_meta``; the specification's example leaves it out (as it leaves out every
    request's): both the schema and the model refuse it as shown, and take it with the
    ``_meta`` every modern request carries."""
    assert not oracle.schema_accepts("ListSkillsRequest", LIST_REQUEST)
    assert not oracle.model_accepts("ListSkillsRequest", LIST_REQUEST)
    sent = {**LIST_REQUEST, "params": {"_meta": MODERN_META}}
    assert oracle.schema_accepts("ListSkillsRequest", sent)
    loaded = wire.ListSkillsRequest.model_validate_json(json.dumps(sent))
    assert tagged(json.loads(loaded.model_dump_json())) == tagged(sent)


@pytest.mark.parametrize(
    "entry",
    [
        {**GIT_WORKFLOW, "resources": "static"},
        {key: value for key, value in GIT_WORKFLOW.items() if key != "resources"},
        {**GIT_WORKFLOW, "frontmatter": {"name": "git-workflow"}},
        {**GIT_WORKFLOW, "resources": [{"uri": "skill://git-workflow/SKILL.md", "size": 1}]},
    ],
    ids=["other-string", "no-resources", "no-description", "no-digest"],
)
def test_an_invalid_entry_is_refused_by_both(entry: dict[str, Any], oracle: Oracle) -> None:
    """The specification: an entry without resources, or with anything but an array or
    "dynamic", is invalid; frontmatter always has name and description."""
    assert not oracle.schema_accepts("Skill", entry)
    assert not oracle.model_accepts("Skill", entry)
