"""bench/memory.py still runs: both servers measured in every phase."""

from __future__ import annotations

from tests.bench.quick import run_quick, table


def test_memory_quick_prints_its_table() -> None:
    output = run_quick("memory.py")
    rows = {row["server"]: row for row in table(output)}
    assert set(rows) == {"snodo", "official"}
    for server, row in rows.items():
        # Resident memory of a Python worker with its imports is tens of MiB, never 0.
        assert float(row["idle RSS MiB"]) > 1, server
        assert float(row["after one request MiB"]) > 1, server
        float(row["per 1,000 listen streams MiB"])
        float(row["per 1,000 legacy sessions MiB"])
        float(row["per 1,000 idle connections MiB"])
    assert "official / snodo, per legacy session: " in output
