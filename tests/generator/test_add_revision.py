"""A spec bump in one command, on a fictitious revision made here from the pinned
2026-07-28 schema: ``add-revision`` in a temporary copy of the repository, then
``check``, ``coverage`` and ``diff`` on it, and the changes the runtime would trip over
refused by name.

The fictitious revision 2027-01-26 has the typical changes of a spec bump: an optional
field on ``Tool`` (``deprecated``) and on ``CallToolResult`` (``recap``), a new request
``tools/validate``, a new capability flag ``tools.validate`` (a pydantic name), a renamed
definition (``ToolAnnotations`` -> ``ToolHints``), a removed one (``BaseMetadata``) and a
description-only edit (``Implementation``). Once added, ``snodo run`` serves it beside
2026-07-28 and 2025-11-25 through the runtime's revision registry.

Marked slow: it copies the checkout, generates a package and runs the wire tests and
``snodo run`` in the copy (two minutes in all).
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.packages import discovered
from tests.support.paths import ROOT, copy_checkout, schema_dir

pytestmark = pytest.mark.slow

REVISION = "2027-01-26"
PACKAGE = "snodo_wire_2027_01_26"
BASE = "2026-07-28"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _rename(node: Any, old: str, new: str) -> Any:
    text = json.dumps(node).replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    return json.loads(text)


def fictitious(raw: dict[str, Any]) -> dict[str, Any]:
    """2027-01-26: the 2026-07-28 schema with the changes the module docstring lists."""
    schema = copy.deepcopy(raw)
    defs = schema["$defs"]
    defs["Tool"]["properties"]["deprecated"] = {
        "description": "Whether the tool is kept for old clients only.",
        "type": "boolean",
    }
    defs["CallToolResult"]["properties"]["recap"] = {
        "description": "One line a client may show instead of the content.",
        "type": "string",
    }
    request = copy.deepcopy(defs["CallToolRequest"])
    request["description"] = "Asks the server whether a tool call's arguments are valid."
    request["properties"]["method"]["const"] = "tools/validate"
    request["properties"]["params"] = ref("ValidateToolRequestParams")
    defs["ValidateToolRequest"] = request
    params = copy.deepcopy(defs["CallToolRequestParams"])
    params["description"] = "The tool and the arguments to validate."
    defs["ValidateToolRequestParams"] = params
    defs["ValidateToolResult"] = {
        "description": "Whether the arguments are valid.",
        "properties": {
            "_meta": ref("ResultMetaObject"),
            "resultType": copy.deepcopy(defs["CallToolResult"]["properties"]["resultType"]),
            "valid": {"description": "True when the call would be accepted.", "type": "boolean"},
        },
        "required": ["resultType", "valid"],
        "type": "object",
    }
    response = copy.deepcopy(defs["ListToolsResultResponse"])
    response["description"] = "A successful response to tools/validate."
    response["properties"]["result"] = ref("ValidateToolResult")
    defs["ValidateToolResultResponse"] = response
    defs["ClientRequest"]["anyOf"].append(ref("ValidateToolRequest"))
    defs["ServerResult"]["anyOf"].append(ref("ValidateToolResult"))
    tools = defs["ServerCapabilities"]["properties"]["tools"]["properties"]
    tools["validate"] = {"description": "Whether tools/validate is served.", "type": "boolean"}
    defs["ToolHints"] = defs.pop("ToolAnnotations")
    del defs["BaseMetadata"]
    defs["Implementation"]["description"] += " (Reworded.)"
    return _rename(schema, "ToolAnnotations", "ToolHints")


def _environment(repo: Path, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "SNODO_SCHEMA_DIR": str(schema_dir().parent),
        "XDG_CACHE_HOME": str(cache),
        "PYTHONPATH": os.pathsep.join([str(repo), str(repo / "generated")]),
    }


def generator(repo: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=repo,
        env=_environment(repo, cache),
        capture_output=True,
        text=True,
        check=False,
    )


@dataclass(frozen=True)
class Added:
    repo: Path
    cache: Path
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def added(tmp_path_factory: pytest.TempPathFactory, raw_schema: dict[str, Any]) -> Added:
    """The copy of the repository after ``add-revision 2027-01-26 --from 2026-07-28``."""
    repo = copy_checkout(tmp_path_factory.mktemp("repo"))
    cache = tmp_path_factory.mktemp("cache")
    source = tmp_path_factory.mktemp("download") / "schema.json"
    source.write_text(json.dumps(fictitious(raw_schema), indent=2), encoding="utf-8")
    done = generator(repo, cache, "add-revision", REVISION, "--schema", str(source), "--from", BASE)
    assert done.returncode == 0, done.stderr
    return Added(repo, cache, done.stdout, done.stderr)


def test_add_revision_writes_pin_overlay_package_catalog_and_lists(added: Added) -> None:
    folder = added.repo / "schema" / REVISION
    pin = (folder / "pin.toml").read_text()
    assert 'revision = "2027-01-26"' in pin
    assert 'url = "file:///' in pin and "sha256 = " in pin
    overlay = (folder / "overlay.toml").read_text()
    assert f'name = "{PACKAGE}"' in overlay and "served = true" in overlay
    assert 'latest_version = "2027-01-26"' in overlay
    assert 'supported_versions = ["2027-01-26"]' in overlay
    assert '[methods."tools/validate"]' in overlay  # inferred from the ClientRequest union
    assert (added.repo / "generated" / PACKAGE / "tables.py").is_file()
    catalog = (added.repo / "snodo" / "revisions" / "catalog.py").read_text()
    rows = [line for line in catalog.splitlines() if line.startswith('    ("20')]
    assert rows[0] == f'    ("{REVISION}", "{PACKAGE}", "modern", True, ("{REVISION}",)),'
    pyproject = (added.repo / "pyproject.toml").read_text()
    assert f'"generated/{PACKAGE}"' in pyproject
    first_party = next(line for line in pyproject.splitlines() if "known-first-party" in line)
    assert f'"{PACKAGE}", "generator"' in first_party  # after the other wire packages
    committed = [p.parent.name for p in added.repo.rglob("schema.json")]
    assert committed == ["ext-skills"], "a pinned schema never enters it (a translation does)"
    assert (added.cache / "snodo" / "mcp-schema" / REVISION / "schema.json").is_file()


def test_generation_reports_the_pydantic_name_it_worked_around(added: Added) -> None:
    stderr = added.stderr
    assert "ToolsCapability.validate clashes with pydantic's BaseModel.validate" in stderr
    assert "it is the attribute validate_" in stderr
    code = (
        f"from {PACKAGE} import ServerCapabilities\n"
        "caps = ServerCapabilities.model_validate({'tools': {'validate': False}})\n"
        "assert caps.tools.validate_ is False\n"
        "assert callable(caps.tools.validate)\n"
        "assert caps.model_dump(by_alias=True) == {'tools': {'validate': False}}\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=added.repo,
        env=_environment(added.repo, added.cache),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == "ok\n", done.stderr


def test_check_passes_after_it(added: Added) -> None:
    done = generator(added.repo, added.cache, "check")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    # every pin of the checkout and the new one: checked, or a document schema not at hand
    said = re.search(
        r"(\d+) packages match schema \+ overlay \+ templates"
        r"(?:; not checked \(schema not at hand\): (.+))?$",
        done.stdout,
        re.MULTILINE,
    )
    assert said is not None, done.stdout
    unchecked = said[2].split(", ") if said[2] else []
    assert int(said[1]) + len(unchecked) == len(discovered()) + 1
    assert set(unchecked) <= {r.package for r in discovered() if r.overlay.document}
    assert "catalog.py matches the pinned revisions" in done.stdout


def test_check_reads_the_added_file_from_the_cache_alone(added: Added, tmp_path: Path) -> None:
    """The revision's file is found again with no copy in the schema folder, and a file
    that is not the pinned one is refused."""
    cached = added.cache / "snodo" / "mcp-schema" / REVISION / "schema.json"
    original = cached.read_bytes()
    try:
        cached.write_bytes(original + b"\n")
        done = generator(added.repo, added.cache, "check", "--revision", REVISION)
        assert done.returncode == 2
        assert "refusing to generate" in done.stderr
    finally:
        cached.write_bytes(original)


def test_coverage_lists_what_the_runtime_does_not_serve(added: Added) -> None:
    done = generator(added.repo, added.cache, "coverage", REVISION)
    lines = done.stdout.splitlines()
    assert "not served: tools/validate" in lines
    assert "no authoring keyword: Tool.deprecated" in lines
    assert "flag never set: tools.validate" in lines
    assert "never filled: CallToolResult.recap" in lines
    # a required field of a result the runtime never builds: an error, and a failing exit
    assert "error: required field never filled: ValidateToolResult.valid" in lines
    assert done.returncode == 1
    assert "not served: tools/call" not in lines
    assert "no authoring keyword: Tool.inputSchema" not in lines


def test_diff_lists_definitions_with_descriptions_apart(added: Added) -> None:
    done = generator(added.repo, added.cache, "diff", BASE, REVISION)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"{BASE} -> {REVISION}: 5 added, 2 removed, "
        f"{sum(line.startswith('changed: ') for line in lines)} changed, "
        "1 changed in descriptions only"
    )
    for line in (
        "added: ValidateToolRequest",
        "added: ToolHints",
        "removed: BaseMetadata",
        "removed: ToolAnnotations",
        "renamed: ToolAnnotations -> ToolHints (same schema)",
        "changed: Tool",
        "changed: CallToolResult",
        "changed: ServerCapabilities",
        "description only: Implementation",
    ):
        assert line in lines
    assert "changed: Implementation" not in lines


# -- what the generator refuses, by name ------------------------------------------


def _refused(tmp_path: Path, schema: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    repo = copy_checkout(tmp_path / "repo")
    source = tmp_path / "schema.json"
    source.write_text(json.dumps(schema), encoding="utf-8")
    done = generator(
        repo, tmp_path / "cache", "add-revision", REVISION, "--schema", str(source), "--from", BASE
    )
    assert done.returncode == 2
    assert not (repo / "schema" / REVISION).exists(), "a failed add-revision leaves nothing"
    assert not (repo / "generated" / PACKAGE).exists()
    assert "2027-01-26" not in (repo / "snodo" / "revisions" / "catalog.py").read_text()
    return done


def test_a_removed_notification_the_runtime_names_is_refused_by_name(
    tmp_path: Path, raw_schema: dict[str, Any]
) -> None:
    schema = fictitious(raw_schema)
    defs = schema["$defs"]
    gone = "SubscriptionsAcknowledgedNotification"
    assert gone in defs
    del defs[gone]
    union = defs["ServerNotification"]["anyOf"]
    union.remove(ref(gone))
    done = _refused(tmp_path, _rename(schema, gone, "Notification"))
    assert "error: the runtime names notification notifications/subscriptions/acknowledged" in (
        done.stderr
    )
    assert "snodo/" in done.stderr.split("notifications/subscriptions/acknowledged", 1)[1]
    # As a draft it is generated, not served, and the same finding is a warning.
    repo = tmp_path / "repo"
    draft = generator(
        repo,
        tmp_path / "cache",
        "add-revision",
        REVISION,
        "--schema",
        str(tmp_path / "schema.json"),
        "--from",
        BASE,
        "--draft",
    )
    assert draft.returncode == 0, draft.stderr
    assert "warning: the runtime names notification notifications/subscriptions/acknowledged" in (
        draft.stderr
    )
    assert "served = false" in (repo / "schema" / REVISION / "overlay.toml").read_text()
    catalog = (repo / "snodo" / "revisions" / "catalog.py").read_text()
    assert f'("{REVISION}", "{PACKAGE}", "modern", False, ("{REVISION}",)),' in catalog
    assert "2027-01-26 is a draft, not served" in draft.stdout
    assert generator(repo, tmp_path / "cache", "check").returncode == 0


def test_a_renamed_definition_the_overlay_names_is_refused_by_name(
    tmp_path: Path, raw_schema: dict[str, Any]
) -> None:
    """The input-required result is an overlay fact: renamed, generation names it
    (and setting ``input_required = false`` cannot hide it)."""
    schema = fictitious(raw_schema)
    schema["$defs"]["InputNeededResult"] = schema["$defs"].pop("InputRequiredResult")
    done = _refused(tmp_path, _rename(schema, "InputRequiredResult", "InputNeededResult"))
    assert (
        "[protocol] input_required_result names InputRequiredResult, which the schema does not "
        "define" in done.stderr
    )


def test_the_wire_tests_run_for_the_new_package(added: Added) -> None:
    """The tests find packages under schema/: in the copy, the oracle over built
    instances and mutations and the vendoring test run for 2027-01-26 with no edit."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/wire/test_oracle_built.py",
            "tests/generator/test_generator.py::test_vendored_copy_imports_without_the_runtime",
            "tests/generator/test_generator.py::test_every_definition_has_a_model",
            "-k",
            PACKAGE,
        ],
        cwd=added.repo,
        env=_environment(added.repo, added.cache),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    passed = int(done.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    definitions = len(
        json.loads((added.cache / "snodo" / "mcp-schema" / REVISION / "schema.json").read_text())[
            "$defs"
        ]
    )
    assert passed > definitions  # one oracle case or more per definition, and the two others


@pytest.mark.parametrize(
    "command",
    [
        f"coverage {REVISION}",
        f"diff {BASE} {REVISION}",
        f"add-revision {REVISION} --schema ~/Downloads/{REVISION}.json --from {BASE}",
    ],
)
def test_the_walkthrough_shows_todays_output(added: Added, command: str) -> None:
    """docs/wire.md's "On a spec bump" pastes these commands' output on this revision."""
    page = (ROOT / "docs" / "wire.md").read_text(encoding="utf-8")
    block = page.split(f"```console\n$ python -m generator {command}\n", 1)[1].split("```", 1)[0]
    if command.startswith("add-revision"):
        shown = added.stdout + "".join(
            line + "\n" for line in added.stderr.splitlines() if line.startswith("note: ")
        )
        assert sorted(block.splitlines()) == sorted(shown.splitlines())
        return
    done = generator(added.repo, added.cache, *command.split())
    assert block == done.stdout


SERVER = '''
"""A server as an author writes it, with the method the new revision adds."""

from typing import Any

from snodo.core.context import Context
from snodo.server import Server

server = Server("bump", "1.0")


@server.tool
def echo(text: str) -> str:
    return text


@server.method("tools/validate")
def validate(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {"valid": params["name"] == "echo"}
'''


def _modern(id: int, method: str, version: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta, **params}}


def test_snodo_run_serves_the_new_revision_beside_the_others(added: Added) -> None:
    """One server, run by `snodo run` (stdio) in the copy with no edit after add-revision,
    answers 2027-01-26, 2026-07-28 and 2025-11-25, each checked with its own package:
    tools/validate is valid under 2027-01-26 and refused under 2026-07-28, and its params
    are checked by 2027-01-26's model."""
    (added.repo / "bump_server.py").write_text(SERVER, encoding="utf-8")
    call = {"name": "echo", "arguments": {"text": "hi"}}
    messages = [
        _modern(1, "server/discover", REVISION, {}),
        _modern(2, "tools/validate", REVISION, call),
        _modern(3, "tools/validate", BASE, call),
        _modern(4, "tools/validate", REVISION, {"arguments": {}}),  # no name: 2027's model
        _modern(5, "tools/call", REVISION, call),
        _modern(6, "tools/call", BASE, call),
    ]
    answers = _run_stdio(added, messages)
    assert sorted(answers) == [1, 2, 3, 4, 5, 6]
    assert answers[1]["result"]["supportedVersions"] == [REVISION, BASE]
    assert {k: v for k, v in answers[2]["result"].items() if k != "_meta"} == {
        "resultType": "complete",
        "valid": True,
    }
    assert answers[3]["error"] == {
        "code": -32601,
        "message": f"Method not found: tools/validate (protocol version {BASE})",
    }
    assert answers[4]["error"]["code"] == -32602
    for id in (5, 6):
        assert answers[id]["result"]["content"] == [{"type": "text", "text": "hi"}]
    # A stdio connection keeps the era of its first message: the legacy client is another.
    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    legacy = _run_stdio(added, [initialize])[7]["result"]
    assert legacy["protocolVersion"] == "2025-11-25"
    assert "validate" not in json.dumps(legacy["capabilities"])


def _run_stdio(added: Added, messages: list[dict[str, Any]]) -> dict[int, Any]:
    """`snodo run` of the copy's bump_server.py over stdio: the answers, by id."""
    done = subprocess.run(
        [sys.executable, "-m", "snodo", "run", "bump_server.py:server"],
        cwd=added.repo,
        env=_environment(added.repo, added.cache),
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines()) if "id" in a}
    assert len(answers) == len(messages), done.stdout + done.stderr
    return answers
