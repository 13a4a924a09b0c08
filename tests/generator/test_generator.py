"""The generator on the real pins: drift, determinism, isolation, loud overlay failures.

Every package pinned under ``schema/`` is covered, found there rather than listed
(``snodo_wire`` for 2026-07-28, ``snodo_wire_2025_11_25``, ``snodo_wire_tasks`` for the
Tasks extension, ``snodo_wire_apps`` for MCP Apps, and any revision added since).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import snodo_wire
from generator.__main__ import diff_trees
from generator.overlay import Overlay, OverlayError
from generator.prepass import prepare
from generator.revisions import SCHEMA_ROOT, load_revision
from generator.source import SchemaSourceError, locate_schema
from tests.support.packages import at_hand, defined, discovered
from tests.support.paths import ROOT, schema_dir

MODERN = load_revision(SCHEMA_ROOT / "2026-07-28")
LEGACY = load_revision(SCHEMA_ROOT / "2025-11-25")
ALL = discovered()
PACKAGES = [revision.package for revision in ALL]
GENERATED_HERE = [r.package for r in ALL if r.overlay.document is None or at_hand(r)]
"""What `generate` writes here: every package but a document whose schema is not at hand."""


def load_overlay() -> Overlay:
    return MODERN.overlay


def _generate(out: Path, seed: str) -> None:
    """``python -m generator generate --out``: one package folder per revision in ``out``,
    and the catalog beside ``out`` (never the checkout's, which other tests read)."""
    env = {**os.environ, "PYTHONHASHSEED": seed, "SNODO_SCHEMA_DIR": str(schema_dir().parent)}
    catalog = out.with_name(f"{out.name}-catalog.py")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "generate",
            "--out",
            str(out),
            "--catalog",
            str(catalog),
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One generation of every package (hash seed 0), shared by the tests below."""
    out = tmp_path_factory.mktemp("fresh")
    _generate(out, "0")
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_committed_package_matches_a_fresh_generation(fresh: Path, package: str) -> None:
    """Drift: generated/ is exactly what schema + overlay + templates produce."""
    if package not in GENERATED_HERE:
        pytest.skip(f"{package}: its pinned document schema is not at hand here")
    assert diff_trees(fresh / package, ROOT / "generated" / package) == ""


def test_one_command_generates_every_pinned_revision(fresh: Path) -> None:
    assert sorted(p.name for p in fresh.iterdir()) == sorted(GENERATED_HERE)
    assert {r.package for r in ALL if r.overlay.document is None} <= set(GENERATED_HERE)


def test_output_is_identical_across_hash_seeds(fresh: Path, tmp_path: Path) -> None:
    _generate(tmp_path, "4242")
    files = sorted(p.relative_to(fresh) for p in fresh.rglob("*.py"))
    # 6 modules each for the revisions, 5 for each extension (which define no errors), 4
    # for each document schema (no method tables either)
    assert len(files) == sum(
        4 if r.overlay.document else 5 if r.overlay.extension else 6
        for r in ALL
        if r.package in GENERATED_HERE
    )
    assert files == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.py"))
    for name in files:
        assert (fresh / name).read_bytes() == (tmp_path / name).read_bytes()


def test_check_command_reports_drift(fresh: Path, tmp_path: Path) -> None:
    shutil.copytree(fresh, tmp_path, dirs_exist_ok=True)
    tables = tmp_path / LEGACY.package / "tables.py"
    tables.write_text(tables.read_text() + "\nEDITED_BY_HAND = True\n")
    done = subprocess.run(
        [sys.executable, "-m", "generator", "check", "--out", str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, "SNODO_SCHEMA_DIR": str(schema_dir().parent)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "-EDITED_BY_HAND = True" in done.stdout
    assert f"{tmp_path / LEGACY.package} has drifted" in done.stdout
    assert done.stdout.endswith(
        f"1 of {len(GENERATED_HERE)} packages drifted: run `python -m generator generate`\n"
    )
    assert f"{tmp_path / MODERN.package} matches" in done.stdout


@pytest.mark.parametrize("revision", ALL, ids=PACKAGES)
def test_every_file_carries_the_do_not_edit_header(revision: Any) -> None:
    for path in sorted((ROOT / "generated" / revision.package).glob("*.py")):
        head = path.read_text().splitlines()[:3]
        assert any(revision.pin.sha256 in line for line in head), path.name
        assert any("Do not edit" in line for line in head), path.name


@pytest.mark.parametrize("revision", ALL, ids=PACKAGES)
def test_vendored_copy_imports_without_the_runtime(tmp_path: Path, revision: Any) -> None:
    """Each wire package depends on pydantic alone: a copy imports with snodo blocked,
    and exports at least one name per definition of its schema."""
    package = revision.package
    definitions = len(defined(revision))
    modules = "adapters" if revision.overlay.document else "tables, {package}.adapters"
    vendor = tmp_path / "vendor"
    shutil.copytree(ROOT / "generated" / package, vendor / package)
    blocked = sorted({"snodo", "generator", "jinja2", *PACKAGES} - {package})
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {blocked!r}:\n"
        "            raise ImportError(f'blocked {name}')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"sys.path.insert(0, {str(vendor)!r})\n"
        f"import {package} as wire\n"
        f"import {package}.{modules.format(package=package)}\n"
        f"assert wire.__file__.startswith({str(vendor)!r}), wire.__file__\n"
        "print(len(wire.__all__))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= definitions


# MCP Apps' package keeps numbered classes (McpUiHostContextContainerDimensions1...5):
# its overlay does not name those inline shapes yet.
NAMED = [r for r in ALL if r.pin.revision != "ext-apps"]


@pytest.mark.parametrize("revision", NAMED, ids=[r.package for r in NAMED])
def test_no_generated_name_ends_in_a_digit(revision: Any) -> None:
    models = importlib.import_module(f"{revision.package}.models")
    at_least = len(defined(revision))  # a class or alias per definition, and inline ones
    names = [
        name
        for name, value in vars(models).items()
        if getattr(value, "__module__", None) == models.__name__
        or type(value).__name__ == "TypeAliasType"
    ]
    assert len(names) >= at_least
    assert [name for name in names if name[-1].isdigit()] == []


@pytest.mark.parametrize("revision", ALL, ids=PACKAGES)
def test_every_definition_has_a_model(revision: Any) -> None:
    package = importlib.import_module(revision.package)
    missing = [name for name in defined(revision) if not hasattr(package, name)]
    assert missing == []


def test_models_speak_wire_names_by_default() -> None:
    params = snodo_wire.CallToolRequestParams.model_validate(
        {
            "name": "t",
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "inputResponses": {},
        }
    )
    assert params.input_responses == {}
    dumped = params.model_dump()
    assert set(dumped) == {"name", "_meta", "inputResponses"}
    by_python_name = snodo_wire.CallToolRequestParams(name="t", meta=params.meta, request_state="s")
    assert json.loads(by_python_name.model_dump_json())["requestState"] == "s"


def test_unknown_fields_survive_a_round_trip() -> None:
    tool = snodo_wire.Tool.model_validate(
        {"name": "t", "inputSchema": {"type": "object"}, "x-vendor": [1, 2.0]}
    )
    assert tool.model_dump()["x-vendor"] == [1, 2.0]


def test_method_table_pairs_requests_with_results() -> None:
    from snodo_wire import tables

    call = tables.METHODS["tools/call"]
    assert call.request is snodo_wire.CallToolRequest
    assert call.result is snodo_wire.CallToolResult
    assert {"tools/call", "resources/read", "prompts/get"} == tables.INPUT_REQUIRED_METHODS
    assert {m for m, s in tables.METHODS.items() if s.cacheable} == {
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
    }
    for spec in tables.METHODS.values():
        assert issubclass(spec.params, BaseModel) and dataclasses.is_dataclass(spec)
    assert set(tables.INPUT_REQUESTS) == {
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    }


def test_error_codes() -> None:
    from snodo_wire.errors import ErrorCode

    assert ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert ErrorCode.UNSUPPORTED_PROTOCOL_VERSION == -32022
    assert ErrorCode.HEADER_MISMATCH == -32020
    assert ErrorCode.PARSE_ERROR == -32700


def test_tagged_unions_name_the_branch_that_was_meant() -> None:
    from pydantic import ValidationError

    from snodo_wire import adapters

    with pytest.raises(ValidationError) as info:
        adapters.content_block.validate_python({"type": "image", "data": "x"})
    assert "image" in str(info.value)
    assert "text" not in str(info.value).split("\n")[1]


# -- pinned input ------------------------------------------------------------------


def test_a_schema_with_another_hash_is_refused(tmp_path: Path) -> None:
    forged = tmp_path / "2026-07-28" / "schema.json"
    forged.parent.mkdir()
    forged.write_bytes((schema_dir() / "schema.json").read_bytes() + b"\n")
    with pytest.raises(SchemaSourceError, match="refusing"):
        locate_schema(MODERN.pin, tmp_path)


def test_environment_variable_locates_the_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNODO_SCHEMA_DIR", str(schema_dir().parent))
    path, data = locate_schema(MODERN.pin)
    assert path == schema_dir() / "schema.json"
    assert data.startswith(b"{")


# -- overlay fails loudly ----------------------------------------------------------


def test_a_patch_whose_upstream_value_moved_stops_generation(
    raw_schema: dict[str, Any],
) -> None:
    moved = json.loads(json.dumps(raw_schema))
    moved["$defs"]["JSONValue"]["anyOf"][2]["type"] = ["string"]
    with pytest.raises(OverlayError, match="upstream changed"):
        prepare(moved, load_overlay())


def test_an_unnamed_inline_schema_stops_generation(raw_schema: dict[str, Any]) -> None:
    grown = json.loads(json.dumps(raw_schema))
    grown["$defs"]["Tool"]["properties"]["newThing"] = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
    }
    with pytest.raises(OverlayError, match="Tool/properties/newThing"):
        prepare(grown, load_overlay())


def test_a_method_missing_from_the_overlay_stops_generation(
    raw_schema: dict[str, Any],
) -> None:
    from generator.facts import collect

    overlay = load_overlay()
    fewer = dataclasses.replace(overlay, methods=overlay.methods[1:])
    with pytest.raises(OverlayError, match="ClientRequest"):
        collect(prepare(raw_schema, fewer), fewer)


def test_legacy_tables_give_the_session_era_its_methods() -> None:
    from snodo_wire_2025_11_25 import errors, models, protocol, tables

    assert set(tables.METHODS) == {
        "initialize",
        "ping",
        "logging/setLevel",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
    assert tables.METHODS["initialize"].result is models.InitializeResult
    assert tables.METHODS["resources/subscribe"].result is models.Result
    assert not tables.INPUT_REQUIRED_METHODS
    assert {m: s.result for m, s in tables.SERVER_REQUESTS.items()} == {
        "elicitation/create": models.ElicitResult,
        "ping": models.Result,
        "roots/list": models.ListRootsResult,
        "sampling/createMessage": models.CreateMessageResult,
    }
    assert {rule.method for rule in tables.CAPABILITY_RULES} <= set(tables.SERVER_REQUESTS)
    assert set(tables.CLIENT_NOTIFICATIONS) == {
        "notifications/cancelled",
        "notifications/initialized",
        "notifications/progress",
        "notifications/roots/list_changed",
    }
    assert "notifications/elicitation/complete" in tables.SERVER_NOTIFICATIONS
    every_method = {*tables.METHODS, *tables.SERVER_REQUESTS, *tables.SERVER_NOTIFICATIONS}
    assert [m for m in every_method if "tasks" in m] == []
    assert models.GetTaskRequest.__name__ == "GetTaskRequest"  # tasks: models, no rows
    assert errors.ErrorCode.URL_ELICITATION_REQUIRED == -32042
    assert errors.ErrorCode.RESOURCE_NOT_FOUND == -32002
    assert protocol.REVISION == protocol.LATEST_PROTOCOL_VERSION == "2025-11-25"
    assert protocol.SUPPORTED_PROTOCOL_VERSIONS == ("2025-11-25", "2025-06-18", "2025-03-26")
