"""Where the checkout, the pinned schema and the spec's examples live; a copy of the
checkout for a test that builds or generates in one of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
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


def copy_checkout(into: Path) -> Path:
    """The files a clean checkout would have (tracked, or new and not ignored), copied
    into ``into`` as they are on disk, and the npm packages the scripts installed
    (``interop/*/node_modules``: a pin may read its schema there) linked in."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    for modules in ROOT.glob("interop/*/node_modules"):
        target = into / modules.relative_to(ROOT)
        if target.parent.is_dir() and not target.exists():
            target.symlink_to(modules.resolve(), target_is_directory=True)
    return into


def released_wheel(pattern: str) -> Path | None:
    """The one wheel matching ``pattern`` that ``scripts/release`` built into
    ``SNODO_RELEASE_DIR`` when ``./scripts/test`` ran it just before; else None."""
    released = os.environ.get("SNODO_RELEASE_DIR")
    found = sorted(Path(released).glob(pattern)) if released else []
    return found[0] if len(found) == 1 else None
