"""The examples do what their docs say: every preference round in-process, and the
walkthrough over real stdio and HTTP server processes."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from types import ModuleType

from tests.support.paths import ROOT


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / "examples" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_preferences_check_passes() -> None:
    assert asyncio.run(_load("preferences").check()) == 0


def test_walkthrough_over_real_transports() -> None:
    done = subprocess.run(
        [sys.executable, "examples/walkthrough.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "walkthrough: 6 passed, 0 failed" in done.stdout


def test_protected_check_passes() -> None:
    done = subprocess.run(
        [sys.executable, "examples/protected.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "protected: 9 passed, 0 failed" in done.stdout
