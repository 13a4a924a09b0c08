"""bench/client_flow.py still runs: every client measured against the same server, every
answer right."""

from __future__ import annotations

from tests.bench.quick import run_quick, table
from tests.support.fastmcp import FASTMCP_PYTHON


def test_client_flow_quick_prints_every_client() -> None:
    output = run_quick("client_flow.py")
    rows = {row["client"]: row for row in table(output)}
    expected = {"floor", "snodo", "snodo-httpx", "official"}
    if FASTMCP_PYTHON.exists():
        expected.add("fastmcp")
    else:
        assert "fastmcp skipped" in output, output
    assert set(rows) == expected, output
    for kind, row in rows.items():
        assert row["wrong answers"] == "0", output
        assert float(row["client CPU µs per call"]) > 0, (kind, output)
    assert rows["official"]["x official"] == "x1.00", output
