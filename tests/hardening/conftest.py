"""Real server processes for the hardening tests, on loopback ports chosen at run time."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.support.processes import Serving, serving, snodo_run

TARGET = "tests/hardening/server.py:server"


@pytest.fixture(scope="module")
def http_server() -> Iterator[Serving]:
    """``snodo run`` serving the hardening target over HTTP."""
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        yield server


@pytest.fixture(scope="module")
def http_url(http_server: Serving) -> str:
    return f"{http_server.base}/mcp"


@pytest.fixture
def stdio_command() -> list[str]:
    """``snodo run`` serving the hardening target over stdio."""
    return snodo_run(TARGET, "stdio")


@pytest.fixture(scope="module")
def auth_url() -> Iterator[str]:
    def uvicorn(port: int) -> list[str]:
        return [
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

    with serving(uvicorn) as server:
        yield f"{server.base}/mcp"
