"""Real server processes for the hardening tests, on loopback ports chosen at run time."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests/hardening/server.py:server"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.05)


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
        wait_for(port, process)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    args = [
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
