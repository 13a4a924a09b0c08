"""Real server processes for the transport tests, always torn down.

``http_url`` starts ``python -m snodo run tests/transports/servers.py:server --transport
http`` once per session on a free loopback port chosen at run time and waits until it
accepts connections. ``stdio_server`` starts a fresh stdio subprocess per test and
reads its stdout and stderr on background threads. ``loop`` is one event loop per test
module, so async clients (and stdio subprocesses they own) can span several tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.processes import accepting, free_port, stop

ROOT = Path(__file__).resolve().parents[2]
TARGET = f"{ROOT / 'tests' / 'transports' / 'servers.py'}:server"
STARTUP_SECONDS = 20.0

T = TypeVar("T")


def snodo_command(transport: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "snodo", "run", TARGET, "--transport", transport, *extra]


@dataclass(frozen=True)
class HttpServer:
    base: str
    """``http://127.0.0.1:PORT``"""
    process: subprocess.Popen[bytes]


@contextlib.contextmanager
def http_server(*extra: str) -> Iterator[HttpServer]:
    """A snodo HTTP server process on a free loopback port, stopped on the way out."""
    for _ in range(3):  # the port is free when chosen; another process may take it first
        port = free_port()
        with tempfile.TemporaryFile() as log:
            process = subprocess.Popen(
                snodo_command("http", "--port", str(port), *extra),
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                if accepting(process, port):
                    yield HttpServer(f"http://127.0.0.1:{port}", process)
                    return
                log.seek(0)
                output = log.read().decode(errors="replace")
                if process.poll() is None or "address already in use" not in output.lower():
                    pytest.fail(f"the HTTP server did not start:\n{output}")
            finally:
                stop(process)
    pytest.fail("no free port for the HTTP server after 3 attempts")


@pytest.fixture(scope="session")
def http_base() -> Iterator[str]:
    with http_server() as server:
        yield server.base


@pytest.fixture(scope="session")
def http_url(http_base: str) -> str:
    return f"{http_base}/mcp"


class StdioServer:
    """A stdio server subprocess driven line by line from synchronous test code."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            snodo_command("stdio"),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw_stdout: list[bytes] = []
        self.stderr = bytearray()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        descriptor = self.process.stderr.fileno()
        while chunk := os.read(descriptor, 65536):
            self.stderr += chunk

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.write(json.dumps(message).encode() + b"\n")

    def receive(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next message on stdout; fails on timeout or end of output."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no message from the stdio server within {timeout} s")
        if line is None:
            pytest.fail(f"the stdio server closed stdout; stderr:\n{self.stderr.decode()}")
        message: dict[str, Any] = json.loads(line)
        return message

    def response(self, request_id: Any, timeout: float = 5.0) -> dict[str, Any]:
        """Wait for the response with ``request_id``, failing if another response comes."""
        while True:
            message = self.receive(timeout)
            if "method" in message:
                continue
            assert message.get("id") == request_id, message
            return message

    def drain(self) -> None:
        """Forget whatever is waiting on stdout (left over by an earlier test)."""
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                self.lines.put(None)
                return

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()

    def rest(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Close stdin and collect every message until stdout ends."""
        self.close_stdin()
        messages: list[dict[str, Any]] = []
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                pytest.fail("the stdio server did not close stdout after end of input")
            if line is None:
                return messages
            messages.append(json.loads(line))

    def stop(self) -> None:
        self.close_stdin()
        stop(self.process)
        for thread in self._threads:
            thread.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def stdio_server() -> Iterator[StdioServer]:
    """A stdio server process of this test's own."""
    server = StdioServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def shared_stdio_server() -> Iterator[StdioServer]:
    server = StdioServer()
    try:
        yield server
    finally:
        server.stop()


class Loop:
    """One event loop shared by the tests of a module."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.cleanups: list[Callable[[], Awaitable[None]]] = []

    def run(self, awaitable: Awaitable[T], timeout: float = 20.0) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(awaitable, timeout)

        return self.loop.run_until_complete(bounded())

    def close(self) -> None:
        try:
            for cleanup in reversed(self.cleanups):
                self.loop.run_until_complete(cleanup())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    runner = Loop()
    try:
        yield runner
    finally:
        runner.close()
