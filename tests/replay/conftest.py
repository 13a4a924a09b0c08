"""A real redis-server for the Redis guard's tests, on a free loopback port.

Started once per session (``--save '' --appendonly no``: nothing is written to disk)
and skipped only when the ``redis-server`` binary is absent; CI installs it with apt.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import free_port, stop

START_TIMEOUT = 10.0
"""Seconds for redis-server to answer PING before the fixture gives up."""


def answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (CI: apt-get install redis-server)")
    workdir: Path = tmp_path_factory.mktemp("redis")
    for _ in range(3):  # another process may take the port between probe and bind
        port = free_port()
        process = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--loglevel",
                "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            if answers_ping(port):
                break
            time.sleep(0.02)
        if process.poll() is None and answers_ping(port):
            break
        process.kill()
        process.wait()
    else:
        pytest.fail("redis-server did not start")
    try:
        yield f"redis://127.0.0.1:{port}"
    finally:
        stop(process)
