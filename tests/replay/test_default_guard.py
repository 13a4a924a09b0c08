"""One-time request state by default, against ``snodo run`` processes: a server that says
nothing about a replay guard refuses a replayed final retry (-32602) and its tool runs
once; one that opts out (``State(guard=False)``) runs it again, as its author chose; and
``--workers 2`` refuses the default guard, which would be each worker's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run

SERVERS = '''from pathlib import Path
from typing import Annotated

from snodo import Ask, Server, State, elicitation

RUNS = Path(__file__).with_name("runs.txt")
PAYEE = elicitation.form(
    "Pay whom?",
    {"type": "object", "properties": {"payee": {"type": "string"}}, "required": ["payee"]},
)


def pay(payee: Annotated[str | None, Ask(PAYEE, pick="payee")]) -> str:
    """Pays once per call: each run is written down."""
    with RUNS.open("a") as runs:
        runs.write(f"{payee}\\n")
    return f"paid {payee}"


default = Server("default", "1", legacy=None)
default.tool(pay)
unguarded = Server("unguarded", "1", legacy=None, state=State(guard=False))
unguarded.tool(pay)
'''
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
}
HEADERS = {
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "pay",
}


def call(url: str, request_id: int, **retry: Any) -> dict[str, Any]:
    params = {"name": "pay", "arguments": {}, "_meta": META, **retry}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    reply: dict[str, Any] = httpx.post(url, json=body, headers=HEADERS, timeout=30).json()
    return reply


@pytest.mark.parametrize(("target", "runs"), [("default", 1), ("unguarded", 2)])
def test_a_replayed_final_retry(tmp_path: Path, target: str, runs: int) -> None:
    (tmp_path / "servers.py").write_text(SERVERS)
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "SNODO_STATE_SECRET": "7a" * 32}
    command = lambda port: snodo_run(f"servers:{target}", "http", "--port", str(port))  # noqa: E731
    with serving(command, env=env) as server:
        url = f"{server.base}/mcp"
        asked = call(url, 1)["result"]
        assert asked["resultType"] == "input_required"
        final = {
            "inputResponses": {"payee": {"action": "accept", "content": {"payee": "Ada"}}},
            "requestState": asked["requestState"],
        }
        assert call(url, 2, **final)["result"]["content"][0]["text"] == "paid Ada"
        replayed = call(url, 3, **final)  # someone who saw the final retry sends it again
    if runs == 1:
        assert replayed["error"] == {"code": -32602, "message": "Invalid request state"}
    else:
        assert replayed["result"]["content"][0]["text"] == "paid Ada"
    assert (tmp_path / "runs.txt").read_text().splitlines() == ["Ada"] * runs


@pytest.mark.skipif(sys.platform == "win32", reason="uvicorn workers")
def test_several_workers_refuse_the_default_guard(tmp_path: Path) -> None:
    (tmp_path / "servers.py").write_text(SERVERS)
    run = subprocess.run(
        snodo_run("servers.py:default", "http", "--workers", "2", "--port", "0"),
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "SNODO_STATE_SECRET": "7a" * 32},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 1
    assert run.stderr.startswith("snodo: --workers 2: tool pay can ask the client"), run.stderr
    assert run.stderr.count("\n") == 1
    assert not (tmp_path / "runs.txt").exists()
