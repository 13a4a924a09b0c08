"""A real spec bump in one command, on a fictitious revision made here from the pinned
2026-07-28 schema: ``add-revision`` run once in a temporary copy of the repository, with
no other step, and what the copy can do after it.

The fictitious revision 2027-01-26 has six typical changes: optional fields on ``Tool``
(``deprecated``) and ``CallToolResult`` (``recap``); a new request ``tools/validate``;
a new capability flag ``tools.validate`` (a pydantic name); the input-required result
renamed (``InputRequiredResult`` is ``InputNeededResult``); logging removed (its
notification, level, capability and ``_meta`` key); and a new required field of
``ListToolsResult`` (``total``), which no runtime code fills, so the revision stays a
named draft until code fills it. After the one run, the generator's check and the tests
that find revisions under ``schema/`` pass in the copy (test_add_revision_check.py, the
longest step, in a module of its own to run beside these); one server serves the additive
part beside 2026-07-28 and 2025-11-25 with every answer valid under its revision; once
the copy's runtime fills ``total``, the next run serves the revision, and
``examples/preferences.py`` passes its MRTR flows under it unedited.

Marked slow: it copies the checkout, generates a package and runs the wire tests and
``snodo run`` in the copy (minutes in all).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.generator.bump import (
    BASE,
    LEGACY,
    PACKAGE,
    REVISION,
    Added,
    add_revision,
    environment,
    generator,
    ref,
    rename,
)
from tests.support.paths import ROOT, copy_checkout
from tests.support.processes import accepting, free_port, stop

pytestmark = pytest.mark.slow

# -- the one run --------------------------------------------------------------------


def test_one_run_carries_the_overlay_and_says_each_change_in_one_line(added: Added) -> None:
    assert added.stdout.splitlines() == [
        f"wrote schema/{REVISION}/pin.toml",
        "carried: [protocol] input_required_result: InputRequiredResult -> InputNeededResult"
        f" (InputRequiredResult is renamed in {REVISION}, the same schema)",
        "dropped: [protocol.meta_keys] log_level: io.modelcontextprotocol/logLevel is nowhere"
        f" in {REVISION}",
        """added: [methods."tools/validate"] ValidateToolRequest answered by ValidateToolResult""",
        f"wrote generated/{PACKAGE}",
        "draft: ListToolsResult.total is required and no runtime code fills it",
        f"wrote schema/{REVISION}/overlay.toml",
        "wrote snodo/revisions/catalog.py",
        f"listed {PACKAGE} in pyproject.toml (mypy files, isort known-first-party)",
        f"{REVISION} is a draft, not served: 1 required field(s) no runtime code fills; run"
        f" add-revision again once code fills them; see `python -m generator coverage {REVISION}`",
    ]
    assert added.stderr.splitlines() == [
        "note: ToolsCapability.validate clashes with pydantic's BaseModel.validate: it is the"
        " attribute validate_ (alias 'validate' on the wire)"
    ]


def test_the_pin_overlay_package_catalog_and_lists_are_written(added: Added) -> None:
    folder = added.repo / "schema" / REVISION
    pin = (folder / "pin.toml").read_text()
    assert f'revision = "{REVISION}"' in pin and 'url = "file:///' in pin
    overlay = (folder / "overlay.toml").read_text()
    for line in (
        f'name = "{PACKAGE}"',
        "served = false",
        f'latest_version = "{REVISION}"',
        'input_required_result = "InputNeededResult"',
        '[methods."tools/validate"]',
        'unfilled = ["ListToolsResult.total"]',
    ):
        assert line in overlay.splitlines(), line
    assert "log_level" not in overlay
    assert (added.repo / "generated" / PACKAGE / "tables.py").is_file()
    catalog = (added.repo / "snodo" / "revisions" / "catalog.py").read_text()
    rows = [line for line in catalog.splitlines() if line.startswith('    ("20')]
    assert rows[0] == f'    ("{REVISION}", "{PACKAGE}", "modern", False, ("{REVISION}",)),'
    pyproject = (added.repo / "pyproject.toml").read_text()
    assert f'"generated/{PACKAGE}"' in pyproject
    first_party = next(line for line in pyproject.splitlines() if "known-first-party" in line)
    assert f'"{PACKAGE}", "generator"' in first_party  # after the other wire packages
    committed = {p.parent.name for p in added.repo.rglob("schema.json")}
    translated = {  # a whole translation; one with a base commits its changes alone
        p.parent.name
        for p in ROOT.glob("schema/*/pin.toml")
        if "translated" in p.read_text() and "base =" not in p.read_text()
    }
    assert committed == translated, "a pinned schema never enters it (a translation does)"
    assert (added.cache / "snodo" / "mcp-schema" / REVISION / "schema.json").is_file()


def test_check_reads_the_added_file_from_the_cache_alone(added: Added) -> None:
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


def test_coverage_names_each_field_the_runtime_does_not_fill(added: Added) -> None:
    done = generator(added.repo, added.cache, "coverage", REVISION)
    assert done.stdout.splitlines() == [
        "not served: tools/validate",
        "flag never set: experimental",
        "flag never set: tools.validate",
        "never filled: GetPromptResult.description",
        "never filled: CallToolResult.recap",
        "error: required field never filled: ListToolsResult.total",
        "no authoring keyword: Tool.deprecated",
        f"{REVISION}: 7 finding(s), 1 error(s)",
    ]
    assert done.returncode == 1


def test_diff_lists_definitions_with_therename(added: Added) -> None:
    done = generator(added.repo, added.cache, "diff", BASE, REVISION)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for line in (
        "added: ValidateToolRequest",
        "removed: LoggingMessageNotification",
        "renamed: InputRequiredResult -> InputNeededResult (same schema)",
        "changed: ListToolsResult",
        "changed: ServerCapabilities",
    ):
        assert line in lines


# -- served beside the others -------------------------------------------------------

SERVER = f'''
"""A server as an author writes it, offering what 2027-01-26 adds."""

from typing import Annotated, Any

from pydantic import BaseModel

from snodo import Ask, elicitation
from snodo.core.context import Context
from snodo.server import Server, Spec

server = Server(
    "bump",
    "1.0",
    versions=["{REVISION}", "{BASE}", "{LEGACY}"],
    spec=Spec(capabilities={{"tools": {{"validate": True}}}}),
)


class Name(BaseModel):
    name: str


@server.tool(fields={{"deprecated": False}})
def echo(ctx: Context, text: str) -> str:
    ctx.log("info", "echoing")
    return text


NAME = elicitation.form("Your name?", Name)


@server.tool
def greet(name: Annotated[str | None, Ask(NAME, pick="name")]) -> str:
    return f"Hello {{name}}"


@server.method("tools/validate")
def validate(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {{"valid": params["name"] in ("echo", "greet")}}
'''


def _modern(id: int, method: str, version: str, params: dict[str, Any]) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/logLevel": "debug",
    }
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta, **params}}


def _run_stdio(added: Added, record: Path, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`snodo run` of the copy's bump_server.py over stdio, every answer checked and the
    invalid ones recorded in ``record``: all it wrote, in order."""
    done = subprocess.run(
        [sys.executable, "-m", "snodo", "run", "bump_server.py:server"],
        cwd=added.repo,
        env=environment(
            added.repo, added.cache, SNODO_CHECK_ANSWERS="1", SNODO_INVALID_ANSWERS=str(record)
        ),
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    written = [json.loads(line) for line in done.stdout.splitlines()]
    assert len([w for w in written if "id" in w]) == len(messages), done.stdout + done.stderr
    return written


def test_the_additive_part_is_served_beside_the_others_every_answer_valid(
    added: Added, tmp_path: Path
) -> None:
    (added.repo / "bump_server.py").write_text(SERVER, encoding="utf-8")
    record = tmp_path / "invalid.jsonl"
    call = {"name": "echo", "arguments": {"text": "hi"}}
    written = _run_stdio(
        added,
        record,
        [
            _modern(1, "server/discover", REVISION, {}),
            _modern(2, "server/discover", BASE, {}),
            _modern(3, "tools/validate", REVISION, call),
            _modern(4, "tools/validate", BASE, call),
            _modern(5, "tools/call", REVISION, call),
            _modern(6, "tools/call", BASE, call),
            _modern(7, "tools/call", REVISION, {"name": "greet", "arguments": {}}),
            _modern(8, "tools/list", BASE, {}),
            _modern(9, "tools/list", REVISION, {}),
        ],
    )
    answers = {w["id"]: w for w in written if "id" in w}
    notes = [w["method"] for w in written if "id" not in w]
    revised = answers[1]["result"]
    assert revised["supportedVersions"] == [REVISION, BASE]
    assert revised["capabilities"]["tools"] == {"listChanged": True, "validate": True}
    assert "logging" not in revised["capabilities"]
    assert answers[2]["result"]["capabilities"]["tools"] == {"listChanged": True}
    assert answers[3]["result"]["valid"] is True
    assert answers[4]["error"]["code"] == -32601
    for id in (5, 6):
        assert answers[id]["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert notes == ["notifications/message"], "a log message to 2026-07-28's client alone"
    asked = answers[7]["result"]
    assert asked["resultType"] == "input_required"  # an InputNeededResult, by its new name
    assert asked["inputRequests"]["name"]["method"] == "elicitation/create"
    assert [t["name"] for t in answers[8]["result"]["tools"]] == ["echo", "greet"]
    assert "deprecated" not in answers[8]["result"]["tools"][0]
    assert answers[9]["result"]["tools"][0]["deprecated"] is False
    # Every answer fits its revision, but one: the list the draft's required field is
    # missing from, which is why the revision is a draft.
    invalid = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(i["method"], i["version"], i["path"]) for i in invalid] == [
        ("tools/list", REVISION, "result.total")
    ]
    initialize = {
        "jsonrpc": "2.0",
        "id": 10,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        },
    }
    listing = {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {}}
    legacy = _run_stdio(added, tmp_path / "legacy.jsonl", [initialize, listing])
    assert legacy[0]["result"]["protocolVersion"] == LEGACY
    assert "validate" not in json.dumps(legacy[0]["result"]["capabilities"])
    assert "deprecated" not in json.dumps(legacy[1]["result"])
    assert not (tmp_path / "legacy.jsonl").exists()


def test_an_editable_install_made_before_imports_the_new_package(
    added: Added, tmp_path: Path
) -> None:
    """An editable install maps the packages it was made with: the runtime finds the
    new one in the checkout's generated/ all the same, with no reinstall."""
    known = tmp_path / "installed"
    known.mkdir()
    for package in (added.repo / "generated").iterdir():
        if package.name != PACKAGE:
            (known / package.name).symlink_to(package)
    code = (
        "from snodo.revisions import REVISIONS\n"
        f"revision = REVISIONS.of('{REVISION}')\n"
        "print(revision.package, revision.input_required_result.__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={
            **environment(added.repo, added.cache),
            "PYTHONPATH": f"{added.repo}{os.pathsep}{known}",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == f"{PACKAGE} InputNeededResult\n", done.stderr


# -- a draft until code fills it, then served -----------------------------------------

FILLED = """    result: dict[str, Any] = {key: list(chosen)}
    if kind == "tools":
        result["total"] = len(items)  # what 2027-01-26 requires of tools/list
"""

PREFERENCES = '''
"""examples/preferences.py's flows with the copy's client, speaking what it negotiates."""

import asyncio
import json
import sys

from snodo.client import Client
from tests.support.preferences_flows import _elicit, _roots, _sample


async def main(url: str) -> None:
    async with Client.http(
        url, elicitation=_elicit, url_elicitation=_elicit, sampling=_sample, roots=_roots
    ) as client:
        saved = (await client.call_tool("preferences")).content[0].text
        greeting = (await client.call_tool("greeting")).content[0].text
        prompt = (await client.get_prompt("preferences_prompt")).messages[0].content.text
        print(json.dumps([client.protocol_version, saved, greeting, prompt]))


asyncio.run(asyncio.wait_for(main(sys.argv[1]), 60))
'''


def test_filled_by_code_the_next_run_serves_it_and_the_example_passes_under_it(
    added: Added, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(added.repo, repo, ignore=shutil.ignore_patterns("__pycache__"))
    methods = repo / "snodo" / "server" / "methods.py"
    text = methods.read_text()
    anchor = "    result: dict[str, Any] = {key: list(chosen)}\n"
    assert anchor in text
    methods.write_text(text.replace(anchor, FILLED))
    filled = repo / "snodo" / "server" / "filled.py"
    declared = '"tools/list": frozenset({"tools", "nextCursor", "cacheScope"}),'
    assert declared in filled.read_text()
    filled.write_text(
        filled.read_text().replace(declared, declared.replace('"tools", ', '"tools", "total", '))
    )
    done = generator(repo, added.cache, "add-revision", REVISION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == (
        f"{REVISION} is served by `snodo run` beside the others;"
        f" see `python -m generator coverage {REVISION}`"
    )
    overlay = (repo / "schema" / REVISION / "overlay.toml").read_text()
    assert "served = true" in overlay.splitlines() and "[draft]" not in overlay
    assert generator(repo, added.cache, "coverage", REVISION).returncode == 0
    # examples/preferences.py, unedited, under the revision its client negotiates.
    record = tmp_path / "invalid.jsonl"
    (repo / "drive_preferences.py").write_text(PREFERENCES, encoding="utf-8")
    env = environment(repo, added.cache, SNODO_CHECK_ANSWERS="1", SNODO_INVALID_ANSWERS=str(record))
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "snodo",
            "run",
            "examples/preferences.py:server",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        cwd=repo,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        assert accepting(server, port), (tmp_path / "server.log").read_text()
        done = subprocess.run(
            [sys.executable, "drive_preferences.py", f"http://127.0.0.1:{port}/mcp"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        stop(server)
        log.close()
    assert done.returncode == 0, done.stderr + (tmp_path / "server.log").read_text()
    version, saved, greeting, prompt = json.loads(done.stdout)
    assert version == REVISION
    assert saved == "Would save: theme dark, language ja."
    assert greeting == "Hallo! [ja; notes]"
    assert prompt == f"User preferences: {saved}"
    assert not record.exists(), record.read_text()


# -- a question: the work kept as a draft, the next run resumes it ---------------------


def test_a_question_keeps_the_work_a_draft_that_the_next_run_resumes(
    tmp_path_factory: pytest.TempPathFactory, raw_schema: dict[str, Any]
) -> None:
    """A new request whose result the schema does not name: the run asks, writes the
    overlay with a placeholder and ``[draft] asked``, generates nothing, and the check
    passes meanwhile; answered in the overlay, the next run finishes."""
    schema = copy.deepcopy(raw_schema)
    defs = schema["$defs"]
    request = copy.deepcopy(defs["ListToolsRequest"])
    request["properties"]["method"]["const"] = "tools/search"
    defs["SearchToolsRequest"] = request
    defs["ClientRequest"]["anyOf"].append(ref("SearchToolsRequest"))
    repo = copy_checkout(tmp_path_factory.mktemp("repo"))
    cache = tmp_path_factory.mktemp("cache")
    source = tmp_path_factory.mktemp("download") / "schema.json"
    source.write_text(json.dumps(schema), encoding="utf-8")
    done = generator(repo, cache, "add-revision", REVISION, "--schema", str(source), "--from", BASE)
    assert done.returncode == 3, done.stdout + done.stderr
    question = (
        f'[methods."tools/search"] result: {REVISION} names no SearchToolsResult for '
        "SearchToolsRequest: which definition answers it?"
    )
    assert f"question: {question}" in done.stdout.splitlines()
    overlay = repo / "schema" / REVISION / "overlay.toml"
    text = overlay.read_text()
    assert 'result = "?"' in text and json.dumps(question) in text and "served = false" in text
    assert not (repo / "generated" / PACKAGE).exists()
    assert REVISION not in (repo / "snodo" / "revisions" / "catalog.py").read_text()
    assert generator(repo, cache, "check").returncode == 0  # a pending draft is not checked
    again = generator(repo, cache, "add-revision", REVISION)
    assert again.returncode == 3 and f"question: {question}" in again.stdout.splitlines()
    overlay.write_text(text.replace('result = "?"', 'result = "ListToolsResult"'))
    finished = generator(repo, cache, "add-revision", REVISION)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "[draft]" not in overlay.read_text()
    assert (repo / "generated" / PACKAGE / "tables.py").is_file()
    assert (
        f'("{REVISION}", "{PACKAGE}", "modern", True'
        in (repo / "snodo" / "revisions" / "catalog.py").read_text()
    )


def test_a_removed_notification_the_older_revisions_keep_is_no_reason_to_refuse(
    tmp_path_factory: pytest.TempPathFactory, raw_schema: dict[str, Any]
) -> None:
    """The runtime sends ``notifications/subscriptions/acknowledged`` to the clients of
    2026-07-28, which stays served: a revision without it is added and served, its
    clients simply never get it."""
    schema = copy.deepcopy(raw_schema)
    defs = schema["$defs"]
    gone = "SubscriptionsAcknowledgedNotification"
    del defs[gone]
    defs["ServerNotification"]["anyOf"].remove(ref(gone))
    added = add_revision(tmp_path_factory, rename(schema, gone, "Notification"))
    assert f"{REVISION} is served by `snodo run` beside the others" in added.stdout
    tables = (added.repo / "generated" / PACKAGE / "tables.py").read_text()
    assert "notifications/subscriptions/acknowledged" not in tables


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
