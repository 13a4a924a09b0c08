"""The revision registry: the only way from the runtime to a wire package, what it reads
of each revision, and what an answer of one revision may say."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from snodo.revisions import REVISIONS, build, shaped
from snodo.revisions.catalog import CATALOG, DOCUMENTS, EXTENSIONS

PACKAGE = Path(__file__).resolve().parents[2] / "snodo"
REGISTRY = PACKAGE / "revisions"
GENERATED = PACKAGE.parent / "generated"


def _wire_imports(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """Every import in ``path`` of a generated wire package (snodo_wire, snodo_wire_*)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [
            f"{path.relative_to(root)}:{node.lineno}: {name}"
            for name in names
            if name.split(".")[0] == "snodo_wire" or name.startswith("snodo_wire_")
        ]
    return found


def test_only_the_registry_imports_a_wire_package_by_name() -> None:
    outside = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if REGISTRY not in path.parents
        for hit in _wire_imports(path)
    ]
    assert outside == []


def test_the_import_check_sees_wire_imports(tmp_path: Path) -> None:
    """The walk would pass vacuously if it missed them."""
    inside = [hit for path in sorted(REGISTRY.rglob("*.py")) for hit in _wire_imports(path)]
    assert any(hit.endswith(": snodo_wire") for hit in inside)
    sample = PACKAGE / "core" / "request_path.py"
    planted = tmp_path / "snodo" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(
        sample.read_text()
        + "\nimport snodo_wire_2025_11_25.models\nfrom snodo_wire.tables import METHODS\n"
        + "import snodo_wirex\n"
    )
    names = [hit.rpartition(": ")[2] for hit in _wire_imports(planted, tmp_path)]
    assert names == ["snodo_wire_2025_11_25.models", "snodo_wire.tables"]


def test_the_catalog_names_every_generated_core_package() -> None:
    """Each generated package is a catalog row: a core revision, an extension or a
    document schema."""
    on_disk = {path.parent.name for path in GENERATED.glob("*/protocol.py")}
    listed = (
        {row[1] for row in CATALOG}
        | {package for _, package in EXTENSIONS}
        | {package for _, package in DOCUMENTS}
    )
    assert listed == on_disk


def test_each_version_maps_to_the_revision_that_speaks_it() -> None:
    for version, package, era, served, versions in CATALOG:
        revision = REVISIONS.of(version)
        assert (revision.package, revision.era, revision.served) == (package, era, served)
        assert version == revision.protocol.REVISION
        assert tuple(revision.protocol.SUPPORTED_PROTOCOL_VERSIONS) == versions
        assert all(REVISIONS.of(v) is revision for v in versions)
        assert revision.methods is revision.tables.METHODS
    with pytest.raises(KeyError):
        REVISIONS.of("1999-01-01")


def test_served_versions_are_newest_first_in_each_era() -> None:
    for era in ("modern", "legacy"):
        served = [row for row in CATALOG if row[2] == era and row[3]]
        assert REVISIONS.versions(era) == tuple(v for row in served for v in row[4])
        assert REVISIONS.newest(era).version == served[0][0]


def test_a_catalog_row_with_an_unknown_era_is_refused() -> None:
    version, package, _, served, versions = CATALOG[0]
    with pytest.raises(ValueError, match="era"):
        build([(version, package, "future", served, versions)], [])


def test_shaping_keeps_what_the_revision_defines() -> None:
    modern = REVISIONS.newest("modern")
    legacy = REVISIONS.newest("legacy")
    offered = {
        "tools": {"listChanged": True, "madeUp": True},
        "resources": {"subscribe": True, "listChanged": False},
        "experimental": {"x": {"anything": 1}},
        "extensions": {"vendor.example/thing": {}},
        "madeUpFlag": {},
    }
    assert modern.capabilities(offered) == {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": False},
        "experimental": {"x": {"anything": 1}},
        "extensions": {"vendor.example/thing": {}},
    }
    # The legacy ServerCapabilities defines no extensions: carried all the same.
    assert "extensions" not in legacy.capability_shape
    assert legacy.capabilities(offered)["extensions"] == {"vendor.example/thing": {}}
    assert shaped({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": None}}) == {"b": {"c": 2}}
    info = {"name": "n", "version": "1", "madeUp": "x", "websiteUrl": "https://e.example"}
    assert modern.info(info) == {"name": "n", "version": "1", "websiteUrl": "https://e.example"}
