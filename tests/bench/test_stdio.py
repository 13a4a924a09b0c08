"""bench/stdio.py still runs: both servers, both eras, every answer right."""

from __future__ import annotations

from tests.bench.quick import run_quick, table


def test_stdio_quick_prints_its_table() -> None:
    output = run_quick("stdio.py")
    rows = {(row["server"], row["flow"]): row for row in table(output)}
    assert set(rows) == {
        (kind, flow) for kind in ("snodo", "official") for flow in ("modern", "legacy")
    }
    for key, row in rows.items():
        assert int(row["requests"]) > 0, key
        assert row["errors"] == "0", f"{key}: an answer was wrong"
    assert "legacy: snodo's requests/s " in output
