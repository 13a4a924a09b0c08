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
    for key, row in rows.items():
        # A request through these apps is 100k-200k instructions, a whole process
        # hundreds of millions: far below means the two runs of a case did not differ
        # by the flows; above 400k that the warm-up run was not subtracted, or the
        # difference (a hundred requests here) not divided by them.
        count = int(row["instructions per request"].replace(",", ""))
        assert 20_000 < count < 400_000, key
    # snodo checks more than the floor does, in fewer instructions where compiled (0.96x
    # at 2026-12-02): the same order of work either way, never a multiple of it.
    assert 0.5 < float(rows[("echo", "snodo")]["x floor"].rstrip("x")) < 5.0
