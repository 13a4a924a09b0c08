"""Real server processes for tests: free loopback ports, start-up waits, clean stops."""

from __future__ import annotations

import contextlib
import itertools
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.paths import ROOT

STARTUP_SECONDS = 60.0
"""How long a server may take to accept: on 2 cores shared by the parallel suite and
whatever else runs, a start (an interpreter importing snodo) can take several times its
2 s; one that never starts still fails, once this has passed."""
PORT_ATTEMPTS = 3
"""A port is free when chosen; another process may take it before the server binds it."""


PORT_BLOCK = 1000
FIRST_BLOCK = 20_000
"""Under pytest-xdist, worker N chooses its ports from FIRST_BLOCK + N * PORT_BLOCK on,
below the kernel's ephemeral range (32768-60999 on Linux), where a port bound to 0 or
a client connection's own port never lands."""


def _worker_ports() -> Iterator[int]:
    """This process's ports: its xdist worker's block, in turn from a random place in it
    (so two suites run side by side by different people rarely start on the same port),
    or nothing outside xdist or past the blocks below the ephemeral range."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else -1
    base = FIRST_BLOCK + index * PORT_BLOCK
    if index < 0 or base + PORT_BLOCK > 32_768:
        return
    start = random.randrange(PORT_BLOCK)
    while True:
        for offset in range(PORT_BLOCK):
            yield base + (start + offset) % PORT_BLOCK


_PORTS = _worker_ports()


def free_port() -> int:
    """A loopback port nobody listens on right now, chosen at run time.

    Parallel workers never choose the same one: each takes its ports from a block of
    its own, one after the other, so a port another worker's server is about to bind
    is never handed out here too, and a port this worker just let go is not chosen
    again at once. Outside xdist (or where no port of the block is free), the kernel
    chooses (bind to port 0)."""
    for port in itertools.islice(_PORTS, PORT_BLOCK):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue  # taken by something else: the next one
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        chosen: int = sock.getsockname()[1]
        return chosen


def accepting(process: subprocess.Popen[Any], port: int, seconds: float = STARTUP_SECONDS) -> bool:
    """Wait until the process accepts connections; False if it exits or takes too long."""
    deadline = time.monotonic() + seconds
    while process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process.poll() is None
        time.sleep(0.05)
    return False


def stop(process: subprocess.Popen[Any]) -> None:
    """Terminate, then kill if it will not go."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


SNODO = [sys.executable, "-m", "snodo"]
"""The command line tool run by this interpreter, from whatever checkout it imports."""


def snodo_run(target: str, transport: str, *extra: str) -> list[str]:
    """``python -m snodo run TARGET --transport TRANSPORT ...`` with this interpreter."""
    return [*SNODO, "run", target, "--transport", transport, *extra]


def snodo(
    *argv: str,
    cwd: str | os.PathLike[str] = ROOT,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m snodo ARGV`` run to its end, its output kept as text.

    Standard input is closed unless ``input`` is given, so a command that would ask
    reads the end of input instead of waiting for a person; ``env`` replaces the
    environment whole, as ``subprocess.run`` does. ``timeout`` only stops a hung run.
    """
    return subprocess.run(
        [*SNODO, *argv],
        cwd=cwd,
        env=env,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class ServerDidNotStart(RuntimeError):
    """The process exited or never accepted connections; carries its output."""


@dataclass(frozen=True)
class Serving:
    port: int
    process: subprocess.Popen[bytes]

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT``"""
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def serving(
    command: Callable[[int], list[str]], *, env: Mapping[str, str] | None = None
) -> Iterator[Serving]:
    """``command(port)`` started from the checkout on a free loopback port, stopped on exit.

    A start that fails because the port was taken meanwhile is retried on another port;
    any other failure raises ``ServerDidNotStart`` with the process's output.
    """
    for _ in range(PORT_ATTEMPTS):
        port = free_port()
        with tempfile.TemporaryFile() as log:
            process = subprocess.Popen(
                command(port),
                cwd=ROOT,
                env={**os.environ, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                if accepting(process, port):
                    yield Serving(port, process)
                    return
                log.seek(0)
                output = log.read().decode(errors="replace")
                if process.poll() is None or "address already in use" not in output.lower():
                    raise ServerDidNotStart(f"{command(port)} did not start:\n{output}")
            finally:
                stop(process)
    raise ServerDidNotStart(f"no free port after {PORT_ATTEMPTS} attempts")
