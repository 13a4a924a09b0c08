"""A translated revision committed as its changes to a pinned base (the SEP-3279 draft
over 2026-07-28): composed wherever a pin is read, every part of it held to a sha256."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from generator.revisions import SCHEMA_ROOT, load_revision
from generator.source import SchemaSourceError, at_hand, locate_schema, sha256_of
from generator.translation import TranslationError, compose, dump
from tests.support.packages import raw
from tests.support.paths import schema_dir

DRAFT = load_revision(SCHEMA_ROOT / "2026-12-01")
BASE = load_revision(SCHEMA_ROOT / "2026-07-28")


def _base() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((schema_dir() / "schema.json").read_bytes())
    return schema


def test_the_pin_names_its_base_and_commits_only_the_changes() -> None:
    assert DRAFT.pin.base == "2026-07-28"
    folder = SCHEMA_ROOT / "2026-12-01"
    assert not (folder / "schema.json").exists(), "no copy of the base schema is committed"
    changes = (folder / "translation.json").read_bytes()
    assert sha256_of(changes) == DRAFT.pin.translation_sha256
    assert len(changes) < 20_000


def test_the_composed_schema_is_the_one_the_package_was_generated_from() -> None:
    """The pin's sha256 is the one the translation's schema.json had before it was
    written as changes: the same bytes, so the same package."""
    path, data = locate_schema(DRAFT.pin)
    assert path == SCHEMA_ROOT / "2026-12-01" / "translation.json"
    assert sha256_of(data) == DRAFT.pin.sha256
    protocol = (Path(__file__).parents[2] / "generated" / DRAFT.package / "protocol.py").read_text()
    assert f'SCHEMA_SHA256: Final = "{DRAFT.pin.sha256}"' in protocol
    assert raw(DRAFT) == json.loads(data)


def test_the_changes_are_what_the_sep_changes() -> None:
    base, composed = _base()["$defs"], raw(DRAFT)["$defs"]
    assert sorted(set(composed) - set(base)) == [
        "ContentToolResultOutput",
        "ContentToolResultVariant",
        "CoreToolResultAudience",
        "StructuredToolResultOutput",
        "StructuredToolResultVariant",
        "ToolResultAudience",
        "ToolResultFormat",
        "ToolResultOutput",
        "ToolResultOutputSelector",
        "ToolResultVariant",
    ]
    changed = sorted(name for name in base if base[name] != composed[name])
    assert changed == ["CallToolRequestParams", "CallToolResult", "Tool"]
    assert composed["Tool"]["required"] == ["inputSchema", "name", "outputVariants"]
    assert "outputSchema" not in composed["Tool"]["properties"]
    assert set(composed["CallToolResult"]["properties"]) == (
        set(base["CallToolResult"]["properties"]) - {"content", "structuredContent"} | {"outputs"}
    )


def test_an_edited_translation_is_refused() -> None:
    edited = dataclasses.replace(DRAFT.pin, translation_sha256="0" * 64)
    with pytest.raises(SchemaSourceError, match="translation_sha256"):
        locate_schema(edited)
    composed_elsewhere = dataclasses.replace(DRAFT.pin, sha256="0" * 64)
    with pytest.raises(SchemaSourceError, match="composed from 2026-07-28"):
        locate_schema(composed_elsewhere)


def test_a_base_that_is_not_its_pin_is_refused(tmp_path: Path) -> None:
    forged = tmp_path / "2026-07-28" / "schema.json"
    forged.parent.mkdir()
    forged.write_bytes((schema_dir() / "schema.json").read_bytes() + b"\n")
    with pytest.raises(SchemaSourceError, match="refusing to generate"):
        locate_schema(DRAFT.pin, tmp_path)


def test_the_base_is_read_where_any_pin_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Named by SNODO_SCHEMA_DIR or not, the base comes from where its own pin is found:
    here a folder given on the command line."""
    shutil.copytree(schema_dir(), tmp_path / "2026-07-28")
    monkeypatch.setenv("SNODO_SCHEMA_DIR", str(tmp_path / "nothing"))
    assert at_hand(DRAFT.pin, tmp_path)
    assert sha256_of(locate_schema(DRAFT.pin, tmp_path)[1]) == DRAFT.pin.sha256


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"added": {"Tool": {}}}, "added Tool is defined by the base already"),
        ({"removed": ["NoSuch"]}, "removed NoSuch is not a definition of the base"),
        ({"replaced": {"NoSuch": {}}}, "replaced NoSuch is not a definition"),
        ({"edited": {"Tool": {"removeProperties": ["nope"]}}}, "removes nope"),
        ({"edited": {"Tool": {"addProperties": {"name": {}}}}}, "adds name"),
        ({"edited": {"Tool": {"required": ["nope"]}}}, r"requires \['nope'\]"),
        ({"edited": {"Tool": {"rename": {}}}}, r"unknown keys \['rename'\]"),
        ({"patched": {}}, r"unknown parts \['patched'\]"),
    ],
)
def test_a_translation_that_does_not_fit_its_base_says_where(
    changes: dict[str, Any], message: str
) -> None:
    base = _base()
    before = dump(base)
    with pytest.raises(TranslationError, match=message):
        compose(base, changes)
    assert dump(base) == before, "the base is left as it was"


def test_replaced_and_removed_definitions() -> None:
    composed = compose(
        _base(), {"replaced": {"Cursor": {"type": "integer"}}, "removed": ["EmptyResult"]}
    )
    assert composed["$defs"]["Cursor"] == {"type": "integer"}
    assert "EmptyResult" not in composed["$defs"]
