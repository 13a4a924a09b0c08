"""Session fixtures every test directory may use."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

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
