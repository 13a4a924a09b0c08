"""A real `snodo run` worker stopped with listen streams open: over HTTP a SIGTERM ends
each subscriptions/listen stream with its completion result (and a legacy session's GET
stream) so the worker can stop at once; over stdio, end of input ends them the same way
(basic/patterns/subscriptions.mdx, "Graceful Closure")."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from typing import Any

import httpx

from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run
from tests.support.wire import request

TARGET = "tests/legacy/servers.py:server"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SSE = "application/json, text/event-stream"


def _read_events(
    response: httpx.Response, into: list[dict[str, Any]], ended: threading.Event
) -> None:
    try:
        for line in response.iter_lines():
            if line.startswith("data:") and line[5:].strip():  # not a priming event
                into.append(json.loads(line[5:]))
    except httpx.HTTPError:
        pass
    finally:
        ended.set()


def test_sigterm_ends_listen_and_legacy_streams_gracefully_and_the_worker_stops() -> None:
    listen = request(
        "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="listen-9"
    )
    headers = {
        "content-type": "application/json",
        "accept": SSE,
        **request_headers("subscriptions/listen", listen["params"], "2026-07-28"),
    }
    events: list[dict[str, Any]] = []
    legacy_events: list[dict[str, Any]] = []
    ended, legacy_ended = threading.Event(), threading.Event()
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        url = f"{server.base}/mcp"
        with httpx.Client(timeout=30) as client:
            hello = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
            opened = client.post(url, json=hello, headers={"accept": SSE})
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
                "accept": SSE,
            }
            with (
                client.stream("POST", url, json=listen, headers=headers) as stream,
                client.stream("GET", url, headers=session) as legacy_stream,
            ):
                assert stream.status_code == 200 and legacy_stream.status_code == 200
                readers = [
                    threading.Thread(target=_read_events, args=(stream, events, ended)),
                    threading.Thread(
                        target=_read_events, args=(legacy_stream, legacy_events, legacy_ended)
                    ),
                ]
                for reader in readers:
                    reader.start()
                deadline = time.monotonic() + 10
                while not events and time.monotonic() < deadline:
                    time.sleep(0.05)
                server.process.send_signal(signal.SIGTERM)
                stopped = time.monotonic()
                assert ended.wait(10) and legacy_ended.wait(10)
                server.process.wait(timeout=10)
                took = time.monotonic() - stopped
                for reader in readers:
                    reader.join(5)
    assert events[0]["method"] == "notifications/subscriptions/acknowledged"
    assert events[-1] == {
        "jsonrpc": "2.0",
        "id": "listen-9",
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: "listen-9"}},
    }
    assert took < 8  # not held until the clients let go


def test_end_of_input_on_stdio_ends_a_listen_with_its_result() -> None:
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=4)
    done = subprocess.run(
        snodo_run(TARGET, "stdio"),
        cwd=ROOT,
        input=json.dumps(listen) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["method"] == "notifications/subscriptions/acknowledged"
    assert lines[-1] == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: 4}},
    }
