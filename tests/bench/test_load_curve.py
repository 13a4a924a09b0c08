"""bench/load_curve.py still runs: both servers at two loads, every answer right, the
table printed and the plot written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.bench.quick import BENCH, table


def test_load_curve_quick_prints_its_table_and_writes_the_plot(tmp_path: Path) -> None:
    plot = tmp_path / "curve.png"
    done = subprocess.run(
        [sys.executable, str(BENCH / "load_curve.py"), "--quick", "--plot", str(plot)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, f"load_curve.py failed:\n{done.stdout}\n{done.stderr}"
    rows = {(row["server"], row["connections"]): row for row in table(done.stdout)}
    assert set(rows) == {(server, n) for server in ("snodo", "official") for n in ("1", "4")}
    for key, row in rows.items():
        assert row["flow"] == "echo" and row["workers"] == "1", key
        assert int(row["requests"]) > 0, key
        assert row["errors"] == "0", f"{key}: an answer was wrong"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
