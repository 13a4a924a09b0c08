"""bench/legacy_flow.py still runs: every server validated (the Redis store's where
redis-server is installed), every flow timed, no errors."""

from __future__ import annotations

import shutil

from tests.bench.quick import run_quick, table


def test_legacy_flow_quick_prints_its_table() -> None:
    output = run_quick("legacy_flow.py")
    assert "validated snodo" in output
    assert "validated official" in output
    rows = {row["flow"]: row for row in table(output)}
    assert set(rows) == {
        "snodo echo",
        "official echo",
        "snodo elicit (bridge)",
        "official elicit (ctx.elicit)",
        "official elicit (Resolve)",
        *(
            ("snodo echo, Redis store", "snodo elicit (bridge), Redis store")
            if shutil.which("redis-server")
            else ()
        ),
    }
    for flow, row in rows.items():
        assert int(row["flows"]) > 0, flow
        assert row["errors"] == "0", f"{flow}: a flow answered wrongly"
    assert "official echo / snodo echo: server CPU per flow " in output
