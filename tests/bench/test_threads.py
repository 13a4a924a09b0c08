"""bench/threads.py still runs and prints a row for each kind of tool."""

from __future__ import annotations

from tests.bench.quick import run_quick, table


def test_threads_quick_prints_its_table() -> None:
    rows = {row["tool"]: row for row in table(run_quick("threads.py"))}
    assert set(rows) == {"inline", "thread", "async"}
    assert rows["inline"]["x inline"] == "1.00x"
    for row in rows.values():
        assert float(row["CPU µs per call"]) > 0
