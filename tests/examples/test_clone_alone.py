"""``./scripts/run`` in a clone with nothing beside it: no schema folder, no
``SNODO_SCHEMA_DIR``, no cached schema. The generated packages are committed, so the
main command passes and says in one line that the drift check was skipped.

The clone is this checkout's tracked files as they are now (what ``git clone`` of the
branch gives once they are committed); the scripts take this test's own venv through
``SNODO_VENV`` instead of building one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no tracked files to clone")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    return [name for name in listed.decode().split("\0") if name]


def _clone_alone(base: Path) -> Path:
    """The tracked files copied into ``base/snodo``, with nothing beside them."""
    clone = base / "snodo"
    for name in _tracked():
        source = ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


def _environment(base: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SNODO_SCHEMA_DIR", "PYTHONPATH")}
    env["SNODO_VENV"] = sys.prefix
    env["XDG_CACHE_HOME"] = str(base / "empty-cache")  # no schema cached from earlier runs
    return env


def test_scripts_run_passes_in_a_clone_alone(tmp_path: Path) -> None:
    clone = _clone_alone(tmp_path)
    assert not (clone.parent / "shared").exists()
    done = subprocess.run(
        ["bash", "scripts/run"],
        cwd=clone,
        env=_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("generator check skipped: no schema at hand for "), first
    assert "SNODO_SCHEMA_DIR" in first
    assert "walkthrough: 6 passed, 0 failed" in done.stdout
    assert not (tmp_path / "empty-cache" / "snodo").exists()  # nothing was downloaded


def test_the_check_still_runs_when_the_schema_is_at_hand(tmp_path: Path) -> None:
    """The skip is for a missing schema only: a named folder is checked, and one that
    lacks a revision is an error, not a skip."""
    env = _environment(tmp_path)
    env["SNODO_SCHEMA_DIR"] = str(tmp_path / "nothing-here")
    done = subprocess.run(
        [sys.executable, "-m", "generator", "check", "--if-at-hand"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no schema.json for revision" in done.stderr
