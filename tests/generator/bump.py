"""The fictitious revision 2027-01-26 of tests/generator/test_add_revision.py and the one
``add-revision`` run that adds it to a copy of the repository: one per test module that
asks for ``added`` (tests/generator/conftest.py), so that the longest test of it, in a
module of its own, runs beside the rest."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import copy_checkout, schema_dir

REVISION = "2027-01-26"
PACKAGE = "snodo_wire_2027_01_26"
BASE = "2026-07-28"
LEGACY = "2025-11-25"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def rename(node: Any, old: str, new: str) -> Any:
    text = json.dumps(node).replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    return json.loads(text)


def fictitious(raw: dict[str, Any]) -> dict[str, Any]:
    """2027-01-26: the 2026-07-28 schema with the six changes the module docstring lists."""
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
    defs["InputNeededResult"] = defs.pop("InputRequiredResult")
    schema = rename(schema, "InputRequiredResult", "InputNeededResult")
    defs = schema["$defs"]
    for name in ("LoggingMessageNotification", "LoggingMessageNotificationParams", "LoggingLevel"):
        del defs[name]
    defs["ServerNotification"]["anyOf"].remove(ref("LoggingMessageNotification"))
    del defs["ServerCapabilities"]["properties"]["logging"]
    del defs["RequestMetaObject"]["properties"]["io.modelcontextprotocol/logLevel"]
    listed = defs["ListToolsResult"]
    listed["properties"]["total"] = {"description": "How many tools there are.", "type": "integer"}
    listed["required"] = [*listed.get("required", []), "total"]
    assert "io.modelcontextprotocol/logLevel" not in json.dumps(schema)
    changed: dict[str, Any] = schema
    return changed


def environment(repo: Path, cache: Path, **more: str) -> dict[str, str]:
    return {
        **os.environ,
        "SNODO_SCHEMA_DIR": str(schema_dir().parent),
        "XDG_CACHE_HOME": str(cache),
        "PYTHONPATH": os.pathsep.join([str(repo), str(repo / "generated")]),
        **more,
    }


def generator(repo: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        cwd=repo,
        env=environment(repo, cache),
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


def add_revision(tmp: pytest.TempPathFactory, schema: dict[str, Any]) -> Added:
    repo = copy_checkout(tmp.mktemp("repo"))
    cache = tmp.mktemp("cache")
    source = tmp.mktemp("download") / "schema.json"
    source.write_text(json.dumps(schema, indent=2), encoding="utf-8")
    done = generator(repo, cache, "add-revision", REVISION, "--schema", str(source), "--from", BASE)
    assert done.returncode == 0, done.stdout + done.stderr
    return Added(repo, cache, done.stdout, done.stderr)
