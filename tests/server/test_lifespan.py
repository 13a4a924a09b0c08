"""Lifespans through the real command line: opened once per worker before the first
request, visible to handlers, closed once in reverse order at SIGTERM; one that fails
stops the start with one line and a non-zero exit."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from snodo import Client, Context, Server
from snodo.client.transports import MemoryTransport
from snodo.server.lifespan import StartupFailed
from tests.support.paths import ROOT
from tests.support.processes import STARTUP_SECONDS, accepting, free_port, snodo_run
from tests.support.wire import VERSION, request

TARGET = "tests/server/lifespan_server.py:server"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": VERSION,
    "mcp-method": "tools/call",
    "mcp-name": "which",
}


def events(log: Path) -> list[tuple[str, int]]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [(line.rsplit(" ", 1)[0], int(line.rsplit(" ", 1)[1])) for line in lines]


def events_once(log: Path, count: int, seconds: float = STARTUP_SECONDS) -> list[tuple[str, int]]:
    """The events, once ``count`` are written or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while len(found := events(log)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def which(url: str) -> str:
    body = request("tools/call", {"name": "which"})
    with httpx.Client() as client:  # a connection of its own: any worker may take it
        answer = client.post(url, json=body, headers=HEADERS, timeout=10).json()
    return str(answer["result"]["content"][0]["text"])


def started(command: list[str], log: Path, port: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "LIFESPAN_LOG": str(log)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if not accepting(process, port):
        process.kill()
        raise AssertionError(f"did not start: {process.communicate()[1]}")
    return process


@pytest.mark.parametrize("workers", [1, 2])
def test_each_worker_opens_its_lifespans_once_and_closes_them_at_sigterm(
    tmp_path: Path, workers: int
) -> None:
    log, port = tmp_path / "lifespan.log", free_port()
    command = snodo_run(TARGET, "http", "--port", str(port), "--workers", str(workers))
    command.append("--unshared-legacy-sessions")  # modern requests only
    process = started(command, log, port)
    try:
        answers = {which(f"http://127.0.0.1:{port}/mcp") for _ in range(12)}
        # The port accepts once the first worker serves; on a busy machine the others
        # may still be starting, and may not have taken any of the calls above.
        opened = events_once(log, 2 * workers)
        assert sorted(e for e, _ in opened) == sorted(["open pool", "open settings"] * workers)
        assert {f"{pid} settings of lifespans" for e, pid in opened} >= answers
        assert len({pid for _, pid in opened}) == workers  # once per worker
    finally:
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down gracefully, then raises the signal it caught again.
        assert process.wait(timeout=20) in (0, -signal.SIGTERM)
        assert process.stderr is not None
        process.stderr.close()
    by_worker: dict[int, list[str]] = {}
    for event, pid in events(log):
        by_worker.setdefault(pid, []).append(event)
    assert (
        list(by_worker.values())
        == [["open pool", "open settings", "close settings", "close pool"]] * workers
    )


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_a_lifespan_that_fails_stops_the_start_with_one_line(
    tmp_path: Path, transport: str
) -> None:
    log = tmp_path / "lifespan.log"
    extra = ["--port", str(free_port())] if transport == "http" else []
    done = subprocess.run(
        snodo_run(TARGET, transport, *extra),
        cwd=ROOT,
        env={**os.environ, "LIFESPAN_LOG": str(log), "LIFESPAN_FAIL": "1"},
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode != 0
    failed = [line for line in done.stderr.splitlines() if "did not start" in line]
    assert failed == ["snodo: the server did not start: RuntimeError: database unreachable"]
    assert "Traceback" not in done.stderr
    assert events(log) == [("open pool", events(log)[0][1])]  # never past the first


def test_stdio_serves_inside_the_lifespans_and_leaves_them_at_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    process = subprocess.Popen(
        snodo_run(TARGET, "stdio"),
        cwd=ROOT,
        env={**os.environ, "LIFESPAN_LOG": str(log)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(request("tools/call", {"name": "which"})) + "\n")
    process.stdin.flush()
    answer = json.loads(process.stdout.readline())
    assert answer["result"]["content"][0]["text"] == f"{process.pid} settings of lifespans"
    process.send_signal(signal.SIGTERM)  # stdin still open: the signal ends the serving
    _, errors = process.communicate(timeout=20)  # and closes the pipes
    assert process.returncode == 0, errors
    assert [e for e, _ in events(log)] == [
        "open pool",
        "open settings",
        "close settings",
        "close pool",
    ]


def test_a_memory_client_session_runs_inside_the_lifespan() -> None:
    seen: list[str] = []

    @asynccontextmanager
    async def resource(server: Server) -> AsyncIterator[dict[str, int]]:
        seen.append("open")
        yield {"answer": 42}
        seen.append("close")

    server = Server("m", "1", lifespan=resource)

    @server.tool
    async def read(ctx: Context) -> str:
        return str(ctx.lifespan_as(dict)["answer"])

    async def scenario() -> str:
        async with Client(MemoryTransport(server)) as client:
            text = str((await client.call_tool("read")).content[0].text)
            assert seen == ["open"]
            return text

    assert asyncio.run(scenario()) == "42"
    assert seen == ["open", "close"]


def test_lifespan_as_names_a_missing_type_and_startup_failures_are_typed() -> None:
    ctx = Context(1, "tools/call", {}, VERSION, {}, lifespan=("a", 1))
    assert ctx.lifespan_as(int) == 1
    with pytest.raises(TypeError, match="bytes"):
        ctx.lifespan_as(bytes)

    @asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise OSError("no route")
        yield

    async def start() -> None:
        await Server("b", "1", lifespan=broken).startup()

    with pytest.raises(StartupFailed, match="OSError: no route"):
        asyncio.run(start())
