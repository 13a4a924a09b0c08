"""bench/speed.py still runs every measurement and ends with its table of goals."""

from __future__ import annotations

import subprocess
import sys

from tests.bench.quick import BENCH, table


def test_speed_quick_runs_each_bench_and_prints_every_goal() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / "speed.py"), "--quick", "--no-compiled"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=BENCH.parent,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    goals_table = done.stdout.split("speed goals, one run of", 1)[1]
    rows = {row["goal"]: row for row in table(goals_table)}
    assert any(goal.startswith("client CPU per call") for goal in rows), rows
    proxied = [goal for goal in rows if goal.startswith("snodo proxy's own CPU")]
    assert len(proxied) == 4, rows  # echo and MRTR, at concurrency 16 and 1
    assert any(goal.startswith("thread hop <= 15") for goal in rows), rows
    assert rows["compiled server <= 1.2x the floor"]["measured"] == "not measured"
    for row in rows.values():
        assert row["holds"] in ("yes", "no", "-"), row
