"""The pinned official TypeScript MCP client drives examples/preferences.py through MRTR.

Runs scripts/interop (npm ci when needed, then five workflows over stdio and HTTP; see
interop/official_client/check_mrtr.mjs) and requires it to pass. Skipped only where npm
is missing altogether: CI has it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "interop"
SUMMARY = re.compile(r"^official client: (\d+) passed, (\d+) failed$", re.MULTILINE)


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_official_client_mrtr_workflows() -> None:
    run = subprocess.run(
        ["bash", str(SCRIPT)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = run.stdout + run.stderr
    summaries = SUMMARY.findall(run.stdout)
    assert run.returncode == 0, output
    assert summaries, f"no summary line:\n{output}"
    passed, failed = (int(n) for n in summaries[-1])
    assert failed == 0, output
    # 5 workflows x 2 transports: far more than this many checks when nothing is skipped.
    assert passed >= 80, output
    for transport in ("stdio", "http"):
        assert f"PASS [{transport}] connect" in run.stdout, output
