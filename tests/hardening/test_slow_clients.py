"""What `snodo run` bounds in a connection before the app sees a request: the time a
head and a body may take, the connections one address holds, the length of a header
line (``snodo.transports.http_guard``), each against a real server on loopback."""

from __future__ import annotations

import contextlib
import socket
from typing import Any

import pytest

from snodo.cli import main
from snodo.transports import http_guard
from tests.hardening.test_deploy import count, exchange, head_bytes, message, snodo

PARTIAL_HEAD = b"POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: appl"


def connect_from(address: str, port: int) -> socket.socket:
    """A connection to the server from another loopback address (all of 127/8 is ours)."""
    sock = socket.socket()
    sock.settimeout(30)
    try:
        sock.bind((address, 0))
    except OSError:
        sock.close()
        pytest.skip(f"cannot bind {address} on this host")
    sock.connect(("127.0.0.1", port))
    return sock


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes (b"" after a reset)."""
    received = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_trickling_connections_from_one_address_leave_room_for_others() -> None:
    # 100 places in all; one address trickling a head on 100 connections would take
    # them all (uvicorn answers 503 to everyone then). It holds 64, the default cap.
    with snodo("--limit-concurrency", "100") as port, contextlib.ExitStack() as held:
        trickling = []
        for _ in range(100):
            sock = held.enter_context(connect_from("127.0.0.2", port))
            with contextlib.suppress(OSError):  # refused ones may be closed already
                sock.sendall(PARTIAL_HEAD)
            trickling.append(sock)
        url = f"http://127.0.0.1:{port}/mcp"
        assert count(url).status_code == 200
        refused = read_all(trickling[-1])
        assert refused.startswith(b"HTTP/1.1 503") or refused == b"", refused[:80]
        assert b"too many connections" in refused or refused == b""


def test_a_head_that_never_completes_is_answered_408() -> None:
    with snodo("--head-timeout", "1") as port:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(PARTIAL_HEAD)
            answer = read_all(sock)  # the socket timeout is far beyond the deadline
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
        # An idle connection that never sends a byte is closed too.
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            assert read_all(sock).startswith(b"HTTP/1.1 408")
        assert count(f"http://127.0.0.1:{port}/mcp").status_code == 200


def test_a_body_that_never_completes_is_cut_off() -> None:
    with snodo("--body-timeout", "1") as port:
        body, headers = message("tools/call", {"name": "invocation_count"})
        whole = head_bytes(body, headers, port)
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(whole[: len(whole) - 10])  # all but the body's last bytes
            assert read_all(sock) == b""  # closed, long before the socket's timeout
        assert count(f"http://127.0.0.1:{port}/mcp").status_code == 200


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_a_header_line_over_the_cap_is_431(parser: str) -> None:
    with snodo("--http", parser) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert count(url, x_padding="a" * 8000).status_code == 200
        body, headers = message("tools/call", {"name": "invocation_count"})
        answer = exchange(port, head_bytes(body, {**headers, "x-padding": "a" * 9000}, port))
        assert answer.startswith(b"HTTP/1.1 431"), answer[:80]
        assert count(url).status_code == 200


@pytest.mark.parametrize("size", [1 << 20, 16 << 20])
def test_megabyte_header_lines_are_refused(size: int) -> None:
    with snodo() as port:
        body, headers = message("tools/call", {"name": "invocation_count"})
        answer = exchange(port, head_bytes(body, {**headers, "x-padding": "a" * size}, port))
        # Refused long before the line ends; the server closing with the rest unread may
        # reset the connection, and the answer is lost with it.
        assert answer.startswith(b"HTTP/1.1 431") or answer == b"", answer[:80]
        assert count(f"http://127.0.0.1:{port}/mcp").status_code == 200


def test_the_options_reach_the_protocols_of_this_process_and_of_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: dict[str, Any] = {}
    monkeypatch.setattr("uvicorn.run", lambda app, **options: served.update(options))
    monkeypatch.setattr(http_guard.GuardedHttpTools, "limits", http_guard.GuardLimits())
    monkeypatch.setattr(http_guard.GuardedH11, "limits", http_guard.GuardLimits())
    monkeypatch.delenv(http_guard.LIMITS_ENV, raising=False)
    options = ["--head-timeout", "1.5", "--body-timeout", "2.5", "--limit-per-address", "3"]
    main(["run", "tests/hardening/server.py:server", "--transport", "http", *options])
    assert served["http"] == "snodo.transports.http_guard:GuardedHttpTools"
    expected = http_guard.GuardLimits(head_timeout=1.5, body_timeout=2.5, max_per_address=3)
    assert http_guard.GuardedHttpTools.limits == expected
    assert http_guard.limits_from_environment() == expected  # what a worker reads
