"""The generator on ordinary upstream edits: the overlay's era and served keys, the
runtime's catalog, the input-required result as an overlay fact, description-only
differences in an extension's copies, pydantic-name clashes, and ``upstream`` against a
loopback server serving a changed file."""

from __future__ import annotations

import copy
import dataclasses
import functools
import http.server
import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.__main__ import check_repeated, main
from generator.catalog import CATALOG, render_catalog
from generator.facts import collect
from generator.overlay import Overlay, OverlayError, load_overlay
from generator.prepass import prepare
from generator.render import clashes, render_package
from generator.revisions import SCHEMA_ROOT, load_revision, revisions
from generator.schemadiff import diff_definitions, without_descriptions
from tests.generator.test_synthetic import OVERLAY, PIN, SCHEMA
from tests.support import packages
from tests.support.loopback import http_server
from tests.support.paths import schema_dir

MODERN = load_revision(SCHEMA_ROOT / "2026-07-28")
TASKS = load_revision(SCHEMA_ROOT / "ext-tasks")


# -- era and served --------------------------------------------------------------


def _overlay_with(tmp_path: Path, package: str) -> Path:
    text = OVERLAY.replace('era = "modern"\nserved = true\n', package)
    path = tmp_path / "overlay.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("package", "message"),
    [
        ("", "era must be one of ['modern', 'legacy'], not None"),
        ('era = "future"\nserved = true\n', "era must be one of"),
        ('era = "modern"\n', "served must be true or false, not None"),
        ('era = "modern"\nserved = "yes"\n', "served must be true or false, not 'yes'"),
    ],
)
def test_a_core_overlay_states_its_era_and_whether_it_is_served(
    tmp_path: Path, package: str, message: str
) -> None:
    with pytest.raises(OverlayError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_overlay(_overlay_with(tmp_path, package))


def test_an_extension_has_neither(tmp_path: Path) -> None:
    text = (SCHEMA_ROOT / "ext-tasks" / "overlay.toml").read_text()
    path = tmp_path / "overlay.toml"
    path.write_text(text.replace('name = "snodo_wire_tasks"\n', 'name = "x"\nserved = true\n'))
    with pytest.raises(OverlayError, match="an extension has no era and is not served"):
        load_overlay(path)
    assert (TASKS.overlay.era, TASKS.overlay.served) == (None, False)


# -- the catalog -------------------------------------------------------------------


def test_the_catalog_lists_every_pinned_revision_from_the_overlays() -> None:
    catalog = importlib.import_module("snodo.revisions.catalog")
    found = revisions()
    cores = [r for r in found if r.overlay.extension is None and r.overlay.document is None]
    assert [row[0] for row in catalog.CATALOG] == [r.pin.revision for r in cores]
    assert sorted(row[0] for row in catalog.CATALOG) == sorted(
        (r.pin.revision for r in cores), reverse=False
    )
    assert [row[0] for row in catalog.CATALOG] == sorted(
        (row[0] for row in catalog.CATALOG), reverse=True
    )
    for row, revision in zip(catalog.CATALOG, cores, strict=True):
        overlay = revision.overlay
        assert row == (
            revision.pin.revision,
            overlay.package,
            overlay.era,
            overlay.served,
            overlay.supported_versions,
        )
    assert catalog.EXTENSIONS == (
        ("ext-tasks", "snodo_wire_tasks"),
        ("ext-skills", "snodo_wire_skills"),
        ("ext-apps", "snodo_wire_apps"),
    )
    assert catalog.DOCUMENTS == (
        ("server-json", "snodo_wire_server_json"),
        ("server-card", "snodo_wire_server_card"),
        ("mcpb-manifest", "snodo_wire_mcpb"),
    )
    assert CATALOG.read_text() == render_catalog(found)


def test_check_reports_a_catalog_edited_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SNODO_SCHEMA_DIR", str(schema_dir().parent))
    edited = tmp_path / "catalog.py"
    edited.write_text(CATALOG.read_text().replace("True", "False", 1))
    assert main(["check", "--revision", "ext-tasks", "--catalog", str(edited)]) == 1
    out = capsys.readouterr().out
    assert f"{edited} has drifted from the pinned revisions" in out
    assert out.endswith("the catalog drifted: run `python -m generator generate`\n")
    edited.write_text(CATALOG.read_text())
    assert main(["check", "--revision", "ext-tasks", "--catalog", str(edited)]) == 0


# -- the input-required result is an overlay fact ------------------------------------


def _renamed_input_required(raw: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(raw).replace('"#/$defs/InputRequiredResult"', '"#/$defs/InputNeededResult"')
    schema: dict[str, Any] = json.loads(text)
    schema["$defs"]["InputNeededResult"] = schema["$defs"].pop("InputRequiredResult")
    return schema


def test_a_renamed_input_required_result_is_named(raw_schema: dict[str, Any]) -> None:
    schema = _renamed_input_required(raw_schema)
    with pytest.raises(OverlayError, match="input_required_result names InputRequiredResult"):
        collect(prepare(schema, MODERN.overlay), MODERN.overlay)


def test_input_required_false_cannot_hide_the_rename(raw_schema: dict[str, Any]) -> None:
    """The easy wrong fix (input_required = false for every method) still fails: the
    response allows a result the overlay does not account for."""
    schema = _renamed_input_required(raw_schema)
    overlay = dataclasses.replace(
        MODERN.overlay,
        input_required_result=None,
        methods=tuple(dataclasses.replace(m, input_required=False) for m in MODERN.overlay.methods),
    )
    with pytest.raises(OverlayError, match=r"ResultResponse allows .*InputNeededResult"):
        collect(prepare(schema, overlay), overlay)


def test_the_overlay_rename_generates_the_same_tables(raw_schema: dict[str, Any]) -> None:
    schema = _renamed_input_required(raw_schema)
    overlay = dataclasses.replace(MODERN.overlay, input_required_result="InputNeededResult")
    renamed = collect(prepare(schema, overlay), overlay)
    pinned = collect(prepare(raw_schema, MODERN.overlay), MODERN.overlay)
    assert renamed.methods == pinned.methods


# -- an extension's copies of core definitions --------------------------------------


def _tasks_schema() -> Any:
    return json.loads((schema_dir().parent / "ext-tasks" / "schema.json").read_text())


def test_a_description_only_difference_is_a_warning_naming_both() -> None:
    schema = _tasks_schema()
    assert "Tool" in schema["$defs"]
    schema["$defs"]["Tool"]["description"] = "Reworded upstream."
    schema["$defs"]["Tool"]["properties"]["name"]["description"] = "Reworded too."
    warnings = check_repeated(schema, TASKS, None)
    assert warnings == ["ext-tasks's Tool differs from 2026-07-28's Tool in descriptions only"]


def test_a_real_difference_needs_an_overlay_entry() -> None:
    schema = _tasks_schema()
    schema["$defs"]["Tool"]["required"] = ["name"]
    with pytest.raises(OverlayError, match=r"redefines \['Tool'\] differently .*redefines\]"):
        check_repeated(schema, TASKS, None)
    extension = dataclasses.replace(
        TASKS.overlay.extension, redefines={"Tool": "upstream relaxed inputSchema"}
    )
    allowed = dataclasses.replace(
        TASKS, overlay=dataclasses.replace(TASKS.overlay, extension=extension)
    )
    assert check_repeated(schema, allowed, None) == []
    stale = dataclasses.replace(extension, redefines={"NoSuchDefinition": "gone"})
    stale_revision = dataclasses.replace(
        TASKS, overlay=dataclasses.replace(TASKS.overlay, extension=stale)
    )
    with pytest.raises(OverlayError, match="names \\['NoSuchDefinition'\\]"):
        check_repeated(_tasks_schema(), stale_revision, None)


def test_a_property_named_description_is_not_an_annotation() -> None:
    node = {
        "description": "words",
        "properties": {"description": {"type": "string", "description": "more words"}},
    }
    assert without_descriptions(node) == {"properties": {"description": {"type": "string"}}}
    other = copy.deepcopy(node)
    other["properties"]["description"]["type"] = "integer"
    found = diff_definitions({"$defs": {"A": node}}, {"$defs": {"A": other}})
    assert found.changed == ("A",) and found.described == ()


# -- pydantic names ------------------------------------------------------------------


@pytest.fixture
def clashing(tmp_path: Path) -> Iterator[Path]:
    schema = copy.deepcopy(SCHEMA)
    tag = schema["$defs"]["Tag"]["properties"]
    tag["validate"] = {"type": "boolean"}
    tag["copy"] = {"type": "string"}
    tag["json"] = {"type": "integer"}
    path = tmp_path / "overlay.toml"
    path.write_text(OVERLAY, encoding="utf-8")
    render_package(schema, tmp_path / "wire_clash", PIN, load_overlay(path))
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path / "wire_clash"
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] == "wire_clash"]:
            del sys.modules[name]


def test_a_pydantic_name_is_reported_with_the_attribute_to_use(clashing: Path) -> None:
    notes = clashes(clashing)
    assert sorted(note.split(" ")[0] for note in notes) == [
        "Tag.copy",
        "Tag.json",
        "Tag.validate",
    ]
    assert any("it is the attribute validate_ (alias 'validate' on the wire)" in n for n in notes)
    models = importlib.import_module("wire_clash.models")
    tag = models.Tag.model_validate({"validate": False, "copy": "c", "json": 3})
    assert tag.validate_ is False
    assert callable(tag.validate)  # pydantic's: the reason the note exists
    attributes = {note.split("attribute ")[1].split(" ")[0] for note in notes}
    assert {name: getattr(tag, name) for name in attributes} == {
        "validate_": False,
        "copy_": "c",
        "json_": 3,
    }
    assert tag.model_dump(by_alias=True) == {"validate": False, "copy": "c", "json": 3}


def test_every_clash_of_a_pinned_package_is_worked_around() -> None:
    """A schema property named like a pydantic method (a revision's ``validate`` flag)
    is a field of another attribute name with the wire name as alias, in every pinned
    package: the wire name validates and dumps back."""
    root = Path(importlib.import_module("snodo_wire").__file__ or "").parent.parent
    for revision in revisions():
        models = importlib.import_module(f"{revision.package}.models")
        for note in clashes(root / revision.package):
            where, wire = note.split(" ")[0].split(".")
            attribute = note.split("it is the attribute ")[1].split(" ")[0]
            info = getattr(models, where).model_fields[attribute]
            assert info.alias == wire and attribute != wire, note


# -- upstream --------------------------------------------------------------------------


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A loopback HTTP server over a folder laid out like schema/."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    with http_server(handler) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}/", tmp_path


def test_upstream_reports_definitions_of_a_changed_file(
    mirror: tuple[str, Path],
    raw_schema: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SNODO_SCHEMA_DIR", str(schema_dir().parent))
    url, folder = mirror
    for name in ("2025-11-25", "ext-tasks"):
        (folder / name).mkdir()
        (folder / name / "schema.json").write_bytes(
            (schema_dir().parent / name / "schema.json").read_bytes()
        )
    changed = copy.deepcopy(raw_schema)
    changed["$defs"]["Tool"]["properties"]["deprecated"] = {"type": "boolean"}
    changed["$defs"]["Implementation"]["description"] = "Reworded."
    (folder / "2026-07-28").mkdir()
    (folder / "2026-07-28" / "schema.json").write_text(json.dumps(changed))
    (folder / "draft").mkdir()
    newest = packages.modern()[0]  # the draft is compared with the newest core revision
    draft = copy.deepcopy(packages.raw(newest))
    draft["$defs"]["DraftOnlyRequest"] = draft["$defs"]["CallToolRequest"]
    (folder / "draft" / "schema.json").write_text(json.dumps(draft))
    assert main(["upstream", "--source", url]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert f"2026-07-28: {url}2026-07-28/schema.json differs from the pin" in lines
    assert "  changed: Tool" in lines
    assert "  description only: Implementation" in lines
    assert f"2025-11-25: unchanged upstream ({url}2025-11-25/schema.json)" in lines
    assert f"ext-apps: not published at {url}ext-apps/schema.json" in lines
    assert f"draft ({url}draft/schema.json) against {newest.pin.revision}:" in lines
    assert "  added: DraftOnlyRequest" in lines
    (folder / "2026-07-28" / "schema.json").write_bytes((schema_dir() / "schema.json").read_bytes())
    assert main(["upstream", "--source", url]) == 0


def test_upstream_reads_a_pins_current_file_where_it_is_published() -> None:
    from generator.upstream import current_url, draft_url

    commit = MODERN.pin.commit
    assert current_url(MODERN.pin.url, "2026-07-28", None) == MODERN.pin.url.replace(commit, "main")
    assert draft_url(MODERN, None) == (
        "https://raw.githubusercontent.com/modelcontextprotocol/modelcontextprotocol/main/"
        "schema/draft/schema.json"
    )
    apps = load_revision(SCHEMA_ROOT / "ext-apps")
    assert current_url(apps.pin.url, "ext-apps", None) == (
        "https://unpkg.com/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json"
    )


# -- a removed definition the overlay names --------------------------------------------


def _overlay_names(overlay: Overlay) -> set[str]:
    """Every definition an overlay entry names."""
    names = {m.request for m in overlay.methods} | {m.result for m in overlay.methods}
    for fact in (*overlay.input_requests, *overlay.server_requests):
        names |= {fact.request, fact.result}
    names |= {e.definition for e in overlay.errors}
    names |= {key.split("/")[0] for key in (*overlay.inline_names, *overlay.discriminators)}
    names |= {patch.pointer.split("/")[2] for patch in overlay.patches}
    if overlay.input_required_result is not None:
        names.add(overlay.input_required_result)
    return names


def _without_branch(node: Any, branch: dict[str, str]) -> Any:
    """``node`` with ``branch`` dropped from every list (a union's branches)."""
    if isinstance(node, dict):
        return {key: _without_branch(value, branch) for key, value in node.items()}
    if isinstance(node, list):
        return [_without_branch(item, branch) for item in node if item != branch]
    return node


CORE_REVISIONS = [
    r for r in revisions() if r.overlay.extension is None and r.overlay.document is None
]
REMOVALS = [
    (revision, name)
    for revision in CORE_REVISIONS
    for name in sorted(_overlay_names(revision.overlay))
]


@pytest.mark.parametrize(
    ("revision", "name"), REMOVALS, ids=[f"{r.pin.revision}/{n}" for r, n in REMOVALS]
)
def test_a_removed_definition_the_overlay_names_is_named(revision: Any, name: str) -> None:
    """Removed alone (references left dangling) or with its union branches, generation
    stops with an OverlayError that names it: never a bare KeyError."""
    raw = copy.deepcopy(packages.raw(revision))
    assert name in raw["$defs"]
    alone = copy.deepcopy(raw)
    del alone["$defs"][name]
    with pytest.raises(OverlayError, match=name):
        collect(prepare(alone, revision.overlay), revision.overlay)
    pruned = _without_branch(alone, {"$ref": f"#/$defs/{name}"})
    with pytest.raises(OverlayError, match=name):
        collect(prepare(pruned, revision.overlay), revision.overlay)


# -- the caching hints are an overlay fact ------------------------------------------------


def test_a_renamed_cache_field_is_named(raw_schema: dict[str, Any]) -> None:
    """Renamed upstream, the hint would leave every method silently uncacheable."""
    text = json.dumps(raw_schema).replace('"ttlMs"', '"ttlMillis"')
    with pytest.raises(OverlayError, match="cache_fields names ttlMs"):
        collect(prepare(json.loads(text), MODERN.overlay), MODERN.overlay)
    renamed = dataclasses.replace(MODERN.overlay, cache_fields=("ttlMillis", "cacheScope"))
    rows = collect(prepare(json.loads(text), renamed), renamed).methods
    pinned = collect(prepare(raw_schema, MODERN.overlay), MODERN.overlay).methods
    assert [r.cacheable for r in rows] == [r.cacheable for r in pinned]
    assert sum(r.cacheable for r in pinned) == 6


# -- coverage reads the runtime, in either era -----------------------------------------


def test_coverage_probes_a_legacy_revision_in_a_session() -> None:
    from generator.coverage import coverage
    from generator.runtime import probe

    legacy = coverage(load_revision(SCHEMA_ROOT / "2025-11-25"))
    assert not [line for line in legacy.lines if line.startswith("not served: ")]
    assert "no authoring keyword: Tool.execution" in legacy.lines
    assert legacy.errors == 0
    # The probe does see a method the legacy kernel has no handler for.
    asked = probe("2025-11-25", ["server/discover", "tools/list"], {}, "legacy")
    assert asked.unhandled == ("server/discover",)
    assert "tools" in asked.capabilities and "tools/list" in asked.result_keys


def test_coverage_of_the_pinned_modern_revision() -> None:
    from generator.coverage import coverage

    found = coverage(MODERN)
    assert found.lines == (
        "flag never set: experimental",
        "never filled: GetPromptResult.description",  # a prompt's own value may carry it
    )
    assert (found.errors, found.unfilled) == (0, ())
