"""Running a benchmark script with ``--quick``, and reading the table it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def run_quick(script: str, timeout: float = 300, extra: list[str] | None = None) -> str:
    """The script's output; fails the test with its stderr if it does not end well."""
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick", *(extra or [])],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def table(output: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table in ``output``, by column name."""
    lines = [line for line in output.splitlines() if line.startswith("|")]
    assert len(lines) >= 3, f"no table printed:\n{output}"
    columns = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert set(lines[1].replace("|", "")) == {"-"}, f"no header separator:\n{output}"
    return [
        dict(zip(columns, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]
