"""snodo run: serving a target over HTTP with an allow-list of host names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from snodo.http_headers import request_headers
from tests.processes import accepting, free_port, stop

ROOT = Path(__file__).resolve().parents[2]
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def test_allowed_hosts_and_origins() -> None:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "snodo",
            "run",
            "examples/preferences.py:server",
            "--transport",
            "http",
            "--port",
            str(port),
            "--allow-host",
            "api.example.com",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert accepting(process, port)
        body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
        headers = {
            "content-type": "application/json",
            **request_headers("server/discover", body["params"], "2026-07-28"),
        }
        url = f"http://127.0.0.1:{port}/mcp"

        def status(host: str, origin: str | None = None) -> int:
            extra = {"host": host} | ({"origin": origin} if origin else {})
            return httpx.post(url, json=body, headers={**headers, **extra}).status_code

        assert status(f"127.0.0.1:{port}") == 200
        assert status("api.example.com") == 200
        assert status("api.example.com", "https://api.example.com") == 200
        assert status("evil.example.com") == 421
        assert status("api.example.com", "https://evil.example.com") == 403
    finally:
        stop(process)
