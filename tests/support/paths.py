"""Where the checkout, the pinned schema and the spec's examples live."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REVISION = "2026-07-28"


def schema_dir() -> Path:
    """SNODO_SCHEMA_DIR when set (CI sets it), else ../shared/mcp-schema beside the checkout."""
    configured = os.environ.get("SNODO_SCHEMA_DIR")
    base = Path(configured) if configured else ROOT.parent / "shared" / "mcp-schema"
    return base / REVISION


def example_files() -> list[Path]:
    return sorted((schema_dir() / "examples").glob("*/*.json"))
