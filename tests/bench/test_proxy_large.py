"""bench/proxy_large.py still runs: both sizes measured directly and through the passing
and the decoding proxy, every answer right (a wrong one stops the script)."""

from __future__ import annotations

from tests.bench.quick import run_quick, table


def test_proxy_large_quick_prints_a_row_per_size() -> None:
    rows = table(run_quick("proxy_large.py"))
    assert [row["blocks"] for row in rows] == ["200", "2,000"]
    for row in rows:
        for case in ("passing: proxy + backend", "decoding: proxy + backend"):
            proxy_cpu, backend_cpu = row[case].split(" + ")
            assert float(proxy_cpu.replace(",", "")) >= 0
            assert float(backend_cpu.replace(",", "")) >= 0
