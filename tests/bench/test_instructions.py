"""bench/instructions.py still runs under valgrind and prints a count for each app."""

from __future__ import annotations

import shutil

import pytest

from tests.bench.quick import run_quick, table

pytestmark = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="bench/instructions.py needs valgrind"
)


def test_instructions_quick_prints_its_table() -> None:
    rows = {(row["flow"], row["app"]): row for row in table(run_quick("instructions.py"))}
    assert set(rows) == {("echo", "floor"), ("echo", "snodo")}
    assert rows[("echo", "floor")]["x floor"] == "1.00x"
    for key, row in rows.items():
        # A Python request through an ASGI app is tens of thousands of instructions: a
        # count far below that means the two runs of a case did not differ by the flows.
        assert int(row["instructions per request"].replace(",", "")) > 20_000, key
