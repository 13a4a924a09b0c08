"""``snodo dev``: a real dev loop. The server answers, a saved change is served after a
restart, a syntax error is reported and survived, and the fix is served again."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snodo.client import Client, ClientError
from tests.support.paths import ROOT
from tests.support.processes import free_port, stop

APP = '''from snodo import Server

server = Server("dev", "1.0.0")


@server.tool
def one() -> str:
    """The first tool."""
    return "1"
'''
TWO = '''

@server.tool
def two() -> str:
    """Added while the server ran."""
    return "2"
'''


def tools(url: str) -> list[str] | None:
    async def listed() -> list[str]:
        async with Client.http(url, era="modern", deadline=3) as client:
            return [tool.name for tool in await client.list_tools()]

    try:
        return asyncio.run(listed())
    except (ClientError, OSError):
        return None


def wait_for(url: str, wanted: list[str], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while tools(url) != wanted:
        assert time.monotonic() < deadline, f"never served {wanted}"
        time.sleep(0.3)


def test_a_change_is_served_and_a_syntax_error_survived(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    port = free_port()
    log = (tmp_path / "dev.log").open("w+")
    dev = subprocess.Popen(
        [sys.executable, "-m", "snodo", "dev", "app.py:server", "--port", str(port)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for(url, ["one"])
        app.write_text(APP + TWO)
        wait_for(url, ["one", "two"])
        app.write_text(APP + "\ndef broken(:\n")
        deadline = time.monotonic() + 30
        while "the server exited" not in Path(log.name).read_text():
            assert time.monotonic() < deadline, Path(log.name).read_text()
            time.sleep(0.3)
        assert dev.poll() is None, "the dev loop lives on"
        app.write_text(APP)
        wait_for(url, ["one"])
    finally:
        stop(dev)
        log.close()
    output = Path(log.name).read_text()
    assert f"snodo dev: serving app.py:server at {url}" in output
    assert output.count("snodo dev: app.py changed: restarting") >= 3
    assert "SyntaxError" in output


def test_sigterm_stops_the_server_child_and_frees_the_port(tmp_path: Path) -> None:
    """A service manager's SIGTERM to ``snodo dev``: its server child goes with it. The
    loop runs in a process group of its own, so anything left of it is found (and
    killed at the end, whatever the outcome)."""
    (tmp_path / "app.py").write_text(APP)
    port = free_port()
    dev = subprocess.Popen(
        [sys.executable, "-m", "snodo", "dev", "app.py:server", "--port", str(port)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    group = dev.pid
    try:
        wait_for(f"http://127.0.0.1:{port}/mcp", ["one"])
        dev.send_signal(signal.SIGTERM)
        dev.wait(timeout=60)  # generous: _stop itself gives the child 5 s, then kills
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)  # no process of the loop is left, the server included
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))  # the port is free again
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            dev.wait(timeout=10)
