"""Fixtures for the transport tests: their server as real processes, always torn down.

``http_url`` serves tests/transports/servers.py over HTTP once per session;
``stdio_server`` is a fresh stdio subprocess per test; ``loop`` is one event loop per
test module, so async clients (and stdio subprocesses they own) can span several tests.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loop import Loop
from tests.support.transport_server import StdioServer, http_server


@pytest.fixture(scope="session")
def http_base() -> Iterator[str]:
    with http_server() as server:
        yield server.base


@pytest.fixture(scope="session")
def http_url(http_base: str) -> str:
    return f"{http_base}/mcp"


@pytest.fixture
def stdio_server() -> Iterator[StdioServer]:
    """A stdio server process of this test's own."""
    with StdioServer() as server:
        yield server


@pytest.fixture(scope="module")
def shared_stdio_server() -> Iterator[StdioServer]:
    with StdioServer() as server:
        yield server


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    with Loop() as runner:
        yield runner
