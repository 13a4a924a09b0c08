"""bench/features.py still runs: every case validated (the Redis store's where
redis-server is installed), every case timed, no errors."""

from __future__ import annotations

import shutil

from tests.bench.quick import run_quick, table

CASES = {
    "async def echo (baseline)": "baseline",
    "sync def, inline=True": "inline",
    "sync def, in a worker thread": "thread",
    "two Depends": "depends",
    "declarative Ask flow": "ask",
    "imperative MRTR flow": "mrtr",
    "typed output (pydantic model)": "typed",
    "legacy session echo": "legacy",
    "async echo, RateLimit in memory": "ratelimit",
}


def test_features_quick_prints_its_table() -> None:
    output = run_quick("features.py")
    redis = shutil.which("redis-server") is not None
    expected = {**CASES, **({"legacy session echo, Redis": "legacy-redis"} if redis else {})}
    for name in expected.values():
        assert f"validated {name} " in output, name
    rows = {row["case"]: row for row in table(output)}
    assert set(rows) == set(expected)
    for case, row in rows.items():
        assert int(row["requests"]) > 0, case
        assert row["errors"] == "0", f"{case}: a flow answered wrongly"
    assert rows["declarative Ask flow"]["req/flow"] == "2"
    assert "the thread hop (sync def in the pool - inline=True): " in output
    if not redis:
        assert "redis-server is not installed" in output
