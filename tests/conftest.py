"""Shared test set-up: where the pinned schema and the spec's examples live."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REVISION = "2026-07-28"


def schema_dir() -> Path:
    """SNODO_SCHEMA_DIR when set (CI sets it), else ../shared/mcp-schema beside the checkout."""
    configured = os.environ.get("SNODO_SCHEMA_DIR")
    base = Path(configured) if configured else ROOT.parent / "shared" / "mcp-schema"
    return base / REVISION


def example_files() -> list[Path]:
    return sorted((schema_dir() / "examples").glob("*/*.json"))


@pytest.fixture(scope="session")
def raw_schema() -> dict[str, Any]:
    path = schema_dir() / "schema.json"
    if not path.is_file():
        pytest.fail(f"pinned schema not found at {path}; set SNODO_SCHEMA_DIR")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
