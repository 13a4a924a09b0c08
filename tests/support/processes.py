"""Real server processes for tests: free loopback ports, start-up waits, clean stops."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from typing import Any

STARTUP_SECONDS = 20.0


def free_port() -> int:
    """A loopback port nobody listens on right now, chosen at run time."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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
