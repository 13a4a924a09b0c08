"""The pinned official TypeScript MCP client drives examples/preferences.py through MRTR.

Runs scripts/interop (npm ci when needed, then five workflows over stdio and HTTP pinned
to 2026-07-28, and the legacy flows with the client's default negotiation; see
interop/official_client/check_mrtr.mjs) and requires every check to pass. The script
prints one PASS/FAIL/SKIP line per check and a summary; the number of checks is pinned
here and in docs/performance.md, so a workflow that quietly stops early fails the test. Skipped
only where npm is missing altogether: CI has it.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.support.paths import ROOT

SCRIPT = ROOT / "scripts" / "interop"
SUMMARY = re.compile(r"^official client: (\d+) passed, (\d+) failed$", re.MULTILINE)
VERDICT = re.compile(r"^(PASS|FAIL|SKIP) ", re.MULTILINE)
EXPECTED_CHECKS = 136
"""Every check of the five workflows over stdio and HTTP; docs/performance.md states the same."""


def test_the_measurements_state_the_pinned_number_of_checks() -> None:
    measured = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert f"| {EXPECTED_CHECKS} checks pass | `bash scripts/interop` |" in measured


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
    assert len(summaries) == 1, f"expected one summary line:\n{output}"
    passed, failed = (int(n) for n in summaries[0])
    verdicts = VERDICT.findall(run.stdout)
    total = len(verdicts)
    assert (passed, failed) == (verdicts.count("PASS"), verdicts.count("FAIL")), output
    assert failed == 0, output
    assert passed == total == EXPECTED_CHECKS, output
    for transport in ("stdio", "http"):
        assert f"PASS [{transport}] connect" in run.stdout, output
        # Its default negotiation too: the legacy era, served through the bridge.
        assert f"PASS [{transport}] connect with the default negotiation" in run.stdout, output
        assert f"PASS [{transport}] legacy tool flow: completes" in run.stdout, output
