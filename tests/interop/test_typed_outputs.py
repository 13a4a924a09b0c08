"""A typed tool's outputSchema and structuredContent (docs/examples/typed.py) read by the
official Python SDK's client (mcp 2.3.0) and the official TypeScript client, each of
which checks every result against the schema it listed with its own JSON Schema
validator and raises on a mismatch; in both eras.

Marked slow: each client is a process of its own, started per era (about 25 s)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

pytestmark = pytest.mark.slow

mcp_client = pytest.importorskip("mcp.client")

TARGET = "docs/examples/typed.py:server"
EXPECTED = {
    "now": {"city": "Bergen", "celsius": 21.5},
    "week": {"city": "Bergen", "highs": [20, 22, 19]},
    "spread": {"low": 12, "high": 22},
    "rain_days": {"result": 3},
    "warnings": {"result": ["wind"]},
}


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_the_official_client_validates_every_typed_result(mode: str) -> None:
    async def scenario(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        async with mcp_client.Client(url, mode=mode) as client:
            listed = await client.list_tools()
            schemas = {tool.name: tool.output_schema for tool in listed.tools}
            got = {}
            for name in EXPECTED:
                result = await client.call_tool(name, {"city": "Bergen"})
                assert not result.is_error, result
                got[name] = result.structured_content
            return schemas, got

    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        schemas, got = asyncio.run(asyncio.wait_for(scenario(f"{server.base}/mcp"), 30))
    assert got == EXPECTED
    assert schemas["summary"] is None
    assert all(schemas[name] for name in EXPECTED)
    assert schemas["rain_days"]["x-snodo-wrapped"] is True


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_the_official_typescript_client_validates_every_typed_result() -> None:
    """scripts/interop typed: the pinned TypeScript client, pinned and by default."""
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / "interop"), "typed"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.rstrip().endswith("official client (typed): 12 passed, 0 failed"), run.stdout
