"""bench/threads.py still runs and prints a row for each kind of tool, and the hop."""

from __future__ import annotations

from tests.bench.quick import run_quick, table


def test_threads_quick_prints_its_table() -> None:
    output = run_quick("threads.py")
    rows = {row["tool"]: row for row in table(output)}
    assert set(rows) == {"inline", "thread", "executor", "async"}
    assert "thread hop (CPU µs per call over the inline tool's): " in output
    assert "this event loop and one bare thread" in output  # the floor of any awaited hop
    assert rows["inline"]["x inline"] == "1.00x"
    for row in rows.values():
        assert float(row["CPU µs per call"]) > 0
