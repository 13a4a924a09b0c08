"""``snodo run`` stopped by a signal, as real processes: a legacy client that vanished
with a bridged question pending does not hold the shutdown, what still runs after the
grace period is cancelled, and a second signal ends the process at once; over HTTP and
over stdio. Each wait is generous (a busy machine); what is asserted is that the process
ended and its port is free, never how long it took."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, snodo_run
from tests.support.wire import request

TARGET = "tests/cli/stopping_server.py:server"
LEGACY = "2025-11-25"
SSE = {"accept": "application/json, text/event-stream"}
GENEROUS = 60.0
"""Seconds a stopping process is given: far past any grace used below that is meant to
end it, far short of the 300 s round timeout or the 600 s grace that must not."""


@contextlib.contextmanager
def http_server(tmp_path: Path, *options: str) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        snodo_run(TARGET, "http", "--port", str(port), "--log-level", "info", *options),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        assert accepting(process, port), (tmp_path / "server.log").read_text()
        yield process, port
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=GENEROUS)
        log.close()


def ended_and_freed(process: subprocess.Popen[Any], port: int | None = None) -> None:
    """The process ends within the generous wait; then nothing holds its port."""
    try:
        process.wait(timeout=GENEROUS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {GENEROUS:.0f} s after the stop signal")
    if port is not None:
        with socket.socket() as probe:
            # As a server binds (uvicorn too): a closed connection's TIME_WAIT is no
            # listener, a process still listening is.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", port))


def wait_for_text(path: Path, text: str) -> None:
    deadline = time.monotonic() + GENEROUS
    while text not in path.read_text(errors="replace"):
        assert time.monotonic() < deadline, path.read_text(errors="replace")
        time.sleep(0.05)


def legacy_hello(client: str) -> dict[str, Any]:
    """A legacy client's ``initialize``, able to answer a form question."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def ask_and_vanish(url: str) -> None:
    """A legacy client opens a session, calls ``ask``, reads up to the bridged question,
    and hangs up without answering."""
    with httpx.Client(timeout=GENEROUS) as http:
        opened = http.post(url, json=legacy_hello("vanishing"), headers=SSE)
        headers = {
            **SSE,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": LEGACY,
        }
        http.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}
        with http.stream("POST", url, json=call, headers=headers) as answer:
            for line in answer.iter_lines():
                if line.startswith("data:") and "elicitation/create" in line:
                    return  # and the connection closes, the question unanswered
    pytest.fail("the question never came")


def call_hang(url: str) -> threading.Thread:
    """A modern call of ``hang`` from another thread, its connection kept open."""
    body = request("tools/call", {"name": "hang", "arguments": {}})
    headers = {
        "content-type": "application/json",
        **SSE,
        **request_headers("tools/call", body["params"], "2026-07-28"),
    }

    def post() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(url, json=body, headers=headers, timeout=GENEROUS * 3)

    caller = threading.Thread(target=post, daemon=True)
    caller.start()
    return caller


def test_http_a_vanished_legacy_clients_question_does_not_hold_the_shutdown(
    tmp_path: Path,
) -> None:
    """The grace period is far longer than the wait: only ending the pending bridged
    round at the signal lets the process stop."""
    with http_server(tmp_path, "--graceful-timeout", "600") as (process, port):
        ask_and_vanish(f"http://127.0.0.1:{port}/mcp")
        process.send_signal(signal.SIGTERM)
        ended_and_freed(process, port)


def test_http_what_runs_past_the_grace_period_is_cancelled(tmp_path: Path) -> None:
    with http_server(tmp_path, "--graceful-timeout", "1") as (process, port):
        caller = call_hang(f"http://127.0.0.1:{port}/mcp")
        wait_for_text(tmp_path / "server.log", "hang: started")
        process.send_signal(signal.SIGTERM)
        ended_and_freed(process, port)
        caller.join(GENEROUS)


def test_http_a_second_signal_stops_at_once(tmp_path: Path) -> None:
    with http_server(tmp_path, "--graceful-timeout", "600") as (process, port):
        call_hang(f"http://127.0.0.1:{port}/mcp")
        wait_for_text(tmp_path / "server.log", "hang: started")
        process.send_signal(signal.SIGTERM)
        wait_for_text(tmp_path / "server.log", "Shutting down")  # the first one was taken
        process.send_signal(signal.SIGTERM)
        ended_and_freed(process, port)
    assert "snodo: a second signal: stopping at once" in (tmp_path / "server.log").read_text()
    assert process.returncode == 128 + signal.SIGTERM


@contextlib.contextmanager
def stdio_server(tmp_path: Path, *options: str) -> Iterator[subprocess.Popen[bytes]]:
    """The server over stdio, its log in ``server.log``; killed if still running at the
    end, its pipes closed."""
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        snodo_run(TARGET, "stdio", "--log-level", "info", *options),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=GENEROUS)
        for stream in (process.stdin, process.stdout, log):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def read_message(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, "the server ended its output"
    message: dict[str, Any] = json.loads(line)
    return message


def test_stdio_a_pending_legacy_question_does_not_hold_the_shutdown(tmp_path: Path) -> None:
    with stdio_server(tmp_path, "--graceful-timeout", "600") as process:
        send(process, legacy_hello("silent"))
        assert read_message(process)["id"] == 1
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            process, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ask"}}
        )
        assert read_message(process)["method"] == "elicitation/create"
        process.send_signal(signal.SIGTERM)  # stdin stays open: the client never answers
        ended_and_freed(process)


def test_stdio_what_runs_past_the_grace_period_is_cancelled(tmp_path: Path) -> None:
    with stdio_server(tmp_path, "--graceful-timeout", "1") as process:
        send(process, request("tools/call", {"name": "hang", "arguments": {}}, id=1))
        wait_for_text(tmp_path / "server.log", "hang: started")
        process.send_signal(signal.SIGTERM)
        ended_and_freed(process)
        assert (
            "still running 1.0 s after the stop signal: cancelled"
            in (tmp_path / "server.log").read_text()
        )


def test_stdio_a_second_signal_stops_at_once(tmp_path: Path) -> None:
    with stdio_server(tmp_path, "--graceful-timeout", "600") as process:
        send(process, request("tools/call", {"name": "hang", "arguments": {}}, id=1))
        wait_for_text(tmp_path / "server.log", "hang: started")
        process.send_signal(signal.SIGTERM)
        wait_for_text(tmp_path / "server.log", "answering what is in flight")
        process.send_signal(signal.SIGINT)
        ended_and_freed(process)
        assert process.returncode == 128 + signal.SIGINT
