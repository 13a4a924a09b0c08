"""Session fixtures every test directory may use."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.paths import schema_dir


@pytest.fixture(scope="session")
def raw_schema() -> dict[str, Any]:
    path = schema_dir() / "schema.json"
    if not path.is_file():
        pytest.fail(f"pinned schema not found at {path}; set SNODO_SCHEMA_DIR")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
