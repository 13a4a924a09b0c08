"""bench/tool_search.py still runs, and snodo's default engine keeps its floors on the
benchmark's queries beside FastMCP 4.2.3's BM25 (accuracy depends on no timing: the
figures are the same in any run)."""

from __future__ import annotations

import re

from tests.bench.quick import run_quick, table
from tests.support.fastmcp import fastmcp_python


def share(cell: str) -> float:
    found = re.match(r"([\d.]+)% \(\d+/\d+\)", cell)
    assert found, cell
    return float(found.group(1))


def test_tool_search_quick_scores_both_side_by_side() -> None:
    fastmcp_python()  # the set-up step made FastMCP's venv, so its BM25 is measured too
    output = run_quick("tool_search.py", extra=["--no-model"])
    first = output.split("\n\n| engine (top-1)")[0]  # the accuracy table, before the others
    rows = {(row["engine"], row["queries"]): row for row in table(first)}
    ours = rows[("snodo Lexical (default)", "all 200")]
    theirs = rows[("FastMCP 4.2.3 BM25", "all 200")]
    assert share(ours["top-1"]) >= 75
    assert share(ours["top-1"]) >= share(theirs["top-1"]) + 20
    assert share(ours["top-5"]) >= 90
    assert share(ours["right abstentions"]) >= 80
    assert share(ours["non-English top-1"]) >= 60
    held = rows[("snodo Lexical (default)", "held-out half")]
    assert share(held["top-1"]) > share(rows[("FastMCP 4.2.3 BM25", "held-out half")]["top-1"])
    listed = re.findall(
        r"\| snodo Lexical \(default\) \| [\d.]+ \| [\d.]+ \| .* \(([\d.]+)%\) \|", output
    )
    assert listed and float(listed[0]) < 5, output
