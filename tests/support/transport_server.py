"""The transport tests' server (tests/transports/servers.py) as real processes.

``http_server`` serves it over HTTP on a free loopback port; ``StdioServer`` runs it
over stdio and reads its stdout and stderr on background threads, so synchronous test
code can drive it line by line.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run, stop

TARGET = f"{ROOT / 'tests' / 'transports' / 'servers.py'}:server"
WAIT = 60.0
"""How long a test waits for a message or an exit that must come: only a broken server
waits it out, so it can be far beyond what a loaded machine needs (a 5 s wait failed
with two CPU-bound processes beside the suite)."""


def command(transport: str, *extra: str) -> list[str]:
    """``snodo run`` serving the transport tests' server over ``transport``."""
    return snodo_run(TARGET, transport, *extra)


@contextlib.contextmanager
def http_server(*extra: str) -> Iterator[Serving]:
    """The server over HTTP on a free loopback port, stopped on the way out."""
    with serving(lambda port: command("http", "--port", str(port), *extra)) as server:
        yield server


class StdioServer:
    """A stdio server subprocess driven line by line from synchronous test code."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            command("stdio"),
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

    def receive(self, timeout: float = WAIT) -> dict[str, Any]:
        """The next message on stdout; fails on timeout or end of output."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no message from the stdio server within {timeout} s")
        if line is None:
            pytest.fail(f"the stdio server closed stdout; stderr:\n{self.stderr.decode()}")
        message: dict[str, Any] = json.loads(line)
        return message

    def response(self, request_id: Any, timeout: float = WAIT) -> dict[str, Any]:
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

    def rest(self, timeout: float = WAIT) -> list[dict[str, Any]]:
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

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.close_stdin()
        stop(self.process)
        for thread in self._threads:
            thread.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
