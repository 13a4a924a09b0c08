"""FastMCP 4.2.3's client and the official Python SDK's legacy client (mcp 1.30.0), each
in a process of its own interpreter, use search_tools and call_tool on a snodo server
(tests/search/catalog_server.py, served by ``snodo run`` over HTTP): one in the modern
era, one in a 2025-11-25 session."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fastmcp import fastmcp_python
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run

TARGET = "tests/search/catalog_server.py:server"


@pytest.fixture(scope="module")
def served() -> Iterator[Serving]:
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        yield server


def seen(python: Path, script: Path, url: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), str(script), url], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_fastmcp_searches_and_calls_through_a_snodo_server(served: Serving) -> None:
    found = seen(
        fastmcp_python(), ROOT / "interop" / "fastmcp" / "search_tools.py", f"{served.base}/mcp"
    )
    assert found["protocolVersion"] == "2026-07-28"
    assert found["listed"] == ["get_balance", "search_tools", "call_tool"]
    assert found["found"][0] == "send_email"
    assert found["schema"] == ["to", "subject", "body"]
    assert found["nothing"] == []
    assert found["through"] == "send_email ran with body, subject, to"
    assert found["hidden"] == "geocode ran with address"


def test_the_official_sdk_searches_and_calls_in_a_legacy_session(served: Serving) -> None:
    script = ROOT / "interop" / "python_sdk_legacy" / "search_tools.py"
    found = seen(legacy_sdk_python(), script, f"{served.base}/mcp")
    assert found["protocolVersion"] == "2025-11-25"
    assert "io.snodo/tool-search" in found["extensions"]
    assert found["listed"] == ["get_balance", "search_tools", "call_tool"]
    assert found["found"][0] == "unzip_archive"
    assert found["nothing"] == []
    assert found["through"] == "unzip_archive ran with archive"
    assert found["hidden"] == "geocode ran with address"
