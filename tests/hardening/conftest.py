"""Real server processes for the hardening tests, on loopback ports chosen at run time."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import accepting, free_port, stop

ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests/hardening/server.py:server"


@contextlib.contextmanager
def serving(args: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        args,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if not accepting(process, port):
            raise RuntimeError("server did not start")
        yield process
    finally:
        stop(process)


def http_command(port: int) -> list[str]:
    """``snodo run`` serving the hardening target over HTTP on ``port``."""
    return [
        sys.executable,
        "-m",
        "snodo",
        "run",
        TARGET,
        "--transport",
        "http",
        "--port",
        str(port),
    ]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    args = http_command(port)
    with serving(args, port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def auth_url() -> Iterator[str]:
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "uvicorn",
        "tests.hardening.server:authenticated_app",
        "--factory",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    with serving(args, port):
        yield f"http://127.0.0.1:{port}/mcp"
