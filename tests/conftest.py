"""Session fixtures every test directory may use, and the answer check every test runs
under: each server the suite starts, in this process or in a child process, checks every
answer against its request's revision (``snodo.server.answer_checks``) and records the
invalid ones in one file, which fails the test during which one appeared (unless it is
marked ``invalid_answers``: it makes them on purpose)."""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from snodo.server.answer_checks import CHECK_ENV, RECORD_ENV
from tests.support.paths import schema_dir

# Property tests run on small shared machines where the suite competes with other work:
# how long Hypothesis takes to draw examples says nothing about the code under test, so
# the timing health check and per-example deadline are off; every other check stays.
settings.register_profile(
    "shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("shared-machine")


@pytest.fixture(scope="session")
def raw_schema() -> dict[str, Any]:
    path = schema_dir() / "schema.json"
    if not path.is_file():
        pytest.fail(f"pinned schema not found at {path}; set SNODO_SCHEMA_DIR")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def pytest_configure(config: pytest.Config) -> None:
    """Before any test module is imported (some make servers at import): every server of
    this run checks its answers, and records the invalid ones in a file of this process's."""
    handle, name = tempfile.mkstemp(prefix="snodo-invalid-answers-", suffix=".jsonl")
    os.close(handle)
    os.environ[CHECK_ENV] = "1"
    os.environ[RECORD_ENV] = name


def pytest_unconfigure(config: pytest.Config) -> None:
    name = os.environ.pop(RECORD_ENV, None)
    os.environ.pop(CHECK_ENV, None)
    if name:
        Path(name).unlink(missing_ok=True)


@pytest.fixture(autouse=True)
def _answers_fit_their_revision(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fails a test during which a server answered outside its request's revision."""
    record = Path(os.environ[RECORD_ENV])
    start = record.stat().st_size if record.is_file() else 0
    yield
    if not record.is_file() or request.node.get_closest_marker("invalid_answers"):
        return
    with record.open("rb") as found:
        found.seek(start)
        lines = found.read().decode("utf-8", "replace").splitlines()
    invalid = [json.loads(line) for line in lines if line.strip()]
    if invalid:
        shown = "; ".join(
            f"{i['method']} under {i['version']} at {i['path'] or '/'}: {i['reason']}"
            for i in invalid[:5]
        )
        pytest.fail(f"{len(invalid)} answer(s) outside their revision: {shown}", pytrace=False)


STARTED_FIRST = (
    "tests/generator/test_add_revision_check.py",
    "tests/generator/test_add_revision.py",
    "tests/packaging/test_wheel.py",
    "tests/packaging/test_compiled_install.py",
    "tests/hardening/test_soak.py",
    "tests/bench/test_speed.py",
    "tests/extensions/tasks/test_scaleout.py",
    "tests/cli/test_sign_in.py",
    "tests/bench/test_instructions.py",
    "tests/bench/test_tool_search.py",
    "tests/cli/test_terminal_client.py",
    "tests/generator/test_generator.py",
    "tests/cli/test_definition_errors.py",
    "tests/interop/test_reference_servers.py",
)
"""The files that take the longest on the 2-core machine (a minute or more of one
worker's time in some leg of scripts/test), longest first. They are collected first, so
``--dist loadfile`` (with ``--no-loadscope-reorder``, which keeps this order) hands them
out first, and a leg does not end with every worker idle but the one that took such a
file last."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """STARTED_FIRST first; then, as pytest-xdist would order them, the files with the
    most tests."""
    rank = {path: place for place, path in enumerate(STARTED_FIRST)}
    count = Counter(item.nodeid.split("::", 1)[0] for item in items)

    def order(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path, len(rank)), -count[path]

    items.sort(key=order)


SLOW_SECONDS = 20.0
"""A test longer than this is marked ``slow`` (its own leg in scripts/test) or says in its
docstring why it takes that long."""


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the tests over SLOW_SECONDS that are not marked slow, so the cost shows where
    it was added; the list is for reading, it fails nothing (times vary with the machine)."""
    long = [
        report
        for report in terminalreporter.stats.get("passed", [])
        if report.when == "call"
        and report.duration > SLOW_SECONDS
        and "slow" not in report.keywords
    ]
    if long:
        terminalreporter.write_sep("=", f"over {SLOW_SECONDS:g} s, not marked slow")
        for report in sorted(long, key=lambda r: -r.duration):
            terminalreporter.write_line(f"{report.duration:7.2f}s {report.nodeid}")
