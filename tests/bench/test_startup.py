"""bench/startup.py still runs: every case measured, snodo's import set beside the
official SDK's."""

from __future__ import annotations

from tests.bench.quick import run_quick, table


def test_startup_quick_prints_each_case() -> None:
    rows = {row["case"]: row for row in table(run_quick("startup.py"))}
    assert list(rows) == [
        "floor: python -c pass",
        "snodo: from snodo import Server",
        "official: from mcp.server.mcpserver import MCPServer",
        "snodo list examples/preferences.py",
    ]
    for case, row in rows.items():
        assert float(row["CPU s"]) > 0, case
    assert float(rows["snodo: from snodo import Server"]["x official"]) > 0
    assert rows["snodo list examples/preferences.py"]["x official"] == "-"
