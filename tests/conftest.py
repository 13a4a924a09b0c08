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
