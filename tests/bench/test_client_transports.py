"""bench/client_transports.py still runs: every candidate measured over HTTP (and TLS
where openssl is installed), every answer right."""

from __future__ import annotations

import shutil

from tests.bench.quick import run_quick, table


def test_client_transports_quick_prints_every_candidate() -> None:
    output = run_quick("client_transports.py")
    rows = {row["candidate"]: row for row in table(output)}
    assert set(rows) == {"http11", "httpcore", "h11", "httpx"}, output  # aiohttp: not in .venv
    assert "aiohttp skipped" in output, output
    schemes = ["http", "https"] if shutil.which("openssl") else ["http"]
    for kind, row in rows.items():
        assert row["wrong answers"] == "0", output
        for scheme in schemes:
            assert float(row[f"{scheme} CPU µs per request"]) > 0, (kind, output)
    assert rows["httpx"]["http x httpx"] == "x1.00", output
