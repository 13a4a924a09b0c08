"""stdio against a real ``python -m snodo run ... --transport stdio`` subprocess.

Tests write raw lines to the server's stdin and read newline-delimited JSON-RPC from its
stdout. Most share one process per module (``stdio``, checked alive after each test);
those about ending or about everything on stdout get their own (``stdio_server``).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.paths import ROOT
from tests.support.processes import snodo_run
from tests.support.transport_server import WAIT, StdioServer
from tests.support.wire import request, validate_outgoing

MAX_LINE_BYTES = 4 * 1024 * 1024
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture
def stdio(shared_stdio_server: StdioServer) -> Iterator[StdioServer]:
    """The module's shared stdio process: emptied before the test, checked alive after."""
    shared_stdio_server.drain()
    yield shared_stdio_server
    shared_stdio_server.send(call("echo", {"text": "alive"}, id="alive"))
    while (message := shared_stdio_server.receive()).get("id") != "alive":
        pass
    assert text(message) == "alive"


def call(
    name: str, arguments: dict[str, Any] | None = None, /, id: int | str = 1, **meta: Any
) -> dict[str, Any]:
    return request("tools/call", {"name": name, "arguments": arguments or {}}, id=id, **meta)


def text(message: dict[str, Any]) -> str:
    validate_outgoing(message, "tools/call")
    assert message["result"]["resultType"] == "complete", message
    return str(message["result"]["content"][0]["text"])


def cancel(request_id: Any) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "test"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


def wait_for_status(server: StdioServer, tag: str, wanted: str, id: int) -> None:
    deadline = time.monotonic() + 5
    while True:
        server.send(call("run_status", {"tag": tag}, id=id))
        if text(server.response(id)) == wanted:
            return
        assert time.monotonic() < deadline, f"{tag} never became {wanted}"
        time.sleep(0.02)


def test_request_and_response(stdio: StdioServer) -> None:
    stdio.send(call("add", {"a": 20, "b": 22}, id="abc"))
    response = stdio.receive()
    assert response["id"] == "abc"
    assert text(response) == "42"
    stdio.send(request("server/discover", id=0))
    discovered = stdio.receive()
    validate_outgoing(discovered, "server/discover")
    assert discovered["id"] == 0


def test_concurrent_requests_are_answered_out_of_order(stdio: StdioServer) -> None:
    stdio.send(call("slow", {"seconds": 0.5, "tag": "ooo"}, id=1))
    stdio.send(call("echo", {"text": "fast"}, id=2))
    stdio.send(call("add", {"a": 1, "b": 1}, id=3))
    first, second, third = (stdio.receive() for _ in range(3))
    assert [first["id"], second["id"]] == [2, 3] or [first["id"], second["id"]] == [3, 2]
    assert third["id"] == 1 and text(third) == "slept 0.5"


@pytest.mark.parametrize(
    "line",
    [b"{not json", b"\xff\xfe\n", b'{"jsonrpc": "2.0", "id": 1, "method": ', b"[NaN]"],
)
def test_a_malformed_line_gets_parse_error_and_the_server_goes_on(
    stdio: StdioServer, line: bytes
) -> None:
    stdio.write(line.rstrip(b"\n") + b"\n")
    error = stdio.receive()
    validate_outgoing(error, None)
    assert error["error"]["code"] == -32700
    assert "id" not in error
    stdio.send(call("echo", {"text": "still here"}, id=5))
    assert text(stdio.receive()) == "still here"


@pytest.mark.parametrize(
    ("message", "echoed_id"),
    [
        ({"jsonrpc": "2.0", "id": 8, "method": 3}, 8),
        ({"jsonrpc": "2.0", "id": None, "method": "tools/list"}, None),
        ([{"jsonrpc": "2.0", "id": 9, "method": "tools/list"}], None),
        (17, None),
    ],
)
def test_an_invalid_envelope_gets_invalid_request(
    stdio: StdioServer, message: Any, echoed_id: Any
) -> None:
    stdio.send(message)
    error = stdio.receive()
    assert error["error"]["code"] == -32600
    assert error.get("id") == echoed_id
    stdio.send(call("echo", {"text": "ok"}, id=6))
    assert text(stdio.receive()) == "ok"


def test_blank_lines_and_crlf_are_tolerated(stdio: StdioServer) -> None:
    stdio.write(b"\n   \n\r\n")
    stdio.write(json.dumps(call("echo", {"text": "crlf"}, id=7)).encode() + b"\r\n")
    response = stdio.receive()
    assert response["id"] == 7 and text(response) == "crlf"


@pytest.mark.parametrize("inner", ["just a string", json.dumps(call("echo", {"text": "twice"}))])
def test_a_json_string_is_an_invalid_request_not_json_text(stdio: StdioServer, inner: str) -> None:
    stdio.send(inner)  # type: ignore[arg-type]
    answer = stdio.receive()
    assert "result" not in answer, "a JSON string was decoded again and run as a request"
    assert answer["error"]["code"] == -32600


def test_over_long_lines_get_parse_error_and_the_server_goes_on(
    stdio: StdioServer,
) -> None:
    stdio.write(b"x" * (MAX_LINE_BYTES + 10) + b"\n")
    first = stdio.receive()
    assert first["error"]["code"] == -32700 and "id" not in first
    # A well-formed request that is far too long is refused the same way, without its id.
    huge = call("echo", {"text": "y" * (MAX_LINE_BYTES + 200_000)}, id=10)
    stdio.send(huge)
    second = stdio.receive()
    assert second["error"]["code"] == -32700 and "id" not in second
    stdio.send(call("echo", {"text": "after"}, id=11))
    assert text(stdio.receive()) == "after"


def test_a_line_just_over_the_limit_is_refused(stdio: StdioServer) -> None:
    line = json.dumps(call("echo", {"text": "y" * MAX_LINE_BYTES}, id=13)).encode()
    assert MAX_LINE_BYTES < len(line) < MAX_LINE_BYTES + 4096
    stdio.write(line + b"\n")
    answer = stdio.receive()
    assert answer.get("error", {}).get("code") == -32700, "an over-long line was served"


def test_a_long_line_under_the_limit_is_served(stdio: StdioServer) -> None:
    payload = "z" * (MAX_LINE_BYTES - 1024)
    stdio.send(call("echo", {"text": payload}, id=12))
    response = stdio.receive()
    assert response["id"] == 12 and text(response) == payload


def test_cancelled_requests_get_no_response(stdio_server: StdioServer) -> None:
    tag = "cancel-me"
    stdio_server.send(call("slow", {"seconds": 60, "tag": tag}, id=20))
    wait_for_status(stdio_server, tag, "started", id=21)
    stdio_server.send(cancel(20))
    wait_for_status(stdio_server, tag, "cancelled", id=22)
    # Cancelling again, an unknown id or with broken params changes nothing.
    for note in (cancel(20), cancel(12345), cancel("20")):
        stdio_server.send(note)
    stdio_server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"})
    stdio_server.send(call("echo", {"text": "after cancel"}, id=23))
    assert text(stdio_server.response(23)) == "after cancel"
    started = time.monotonic()
    rest = stdio_server.rest()
    # Held up, the exit would come when the 60 s sleep ends: well after this bound,
    # which a loaded machine's slowness stays far within.
    assert time.monotonic() - started < 40, "the cancelled request held up the exit"
    assert [m for m in rest if m.get("id") == 20] == []
    assert stdio_server.process.wait(timeout=WAIT) == 0


def test_cancelling_one_request_leaves_the_others(stdio: StdioServer) -> None:
    stdio.send(call("slow", {"seconds": 5, "tag": "a"}, id="a"))
    stdio.send(call("slow", {"seconds": 0.3, "tag": "b"}, id="b"))
    wait_for_status(stdio, "a", "started", id=1)
    stdio.send(cancel("a"))
    assert text(stdio.response("b")) == "slept 0.3"
    wait_for_status(stdio, "a", "cancelled", id=2)


def test_progress_notifications_interleave_with_other_responses(
    stdio: StdioServer,
) -> None:
    stdio.send(call("progress", {"steps": 4, "delay": 0.1}, id=30, progressToken="tok"))
    seen: list[dict[str, Any]] = [stdio.receive()]  # the first progress notification
    stdio.send(call("echo", {"text": "between"}, id=31))
    while not any(m.get("id") == 30 for m in seen):
        seen.append(stdio.receive())
    kinds = [m.get("method") or m.get("id") for m in seen]
    assert kinds.count("notifications/progress") == 4
    assert kinds[-1] == 30
    echo_at = kinds.index(31)
    assert 0 < echo_at < kinds.index(30), f"the echo should land between progress: {kinds}"
    notes = [m for m in seen if m.get("method") == "notifications/progress"]
    for note in notes:
        validate_outgoing(note, None)
        assert note["params"]["progressToken"] == "tok"
        assert SUBSCRIPTION_ID not in note["params"].get("_meta", {})
    assert [n["params"]["progress"] for n in notes] == [1, 2, 3, 4]


def test_log_messages_go_to_the_requester_only_when_asked(stdio: StdioServer) -> None:
    stdio.send(call("chatty", id=40))
    assert text(stdio.receive()) == "said hello"
    stdio.send(call("chatty", id=41, **{"io.modelcontextprotocol/logLevel": "debug"}))
    note, response = stdio.receive(), stdio.receive()
    validate_outgoing(note, None)
    assert note["method"] == "notifications/message"
    assert note["params"]["data"] == {"said": "hello"}
    assert response["id"] == 41


def test_a_listen_stream_and_its_cancellation(stdio: StdioServer) -> None:
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=50)
    stdio.send(listen)
    ack = stdio.receive()
    validate_outgoing(ack, None)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {SUBSCRIPTION_ID: 50}
    stdio.send(call("touch_tools", id=51))
    first, second = stdio.receive(), stdio.receive()
    changed, answer = (first, second) if "method" in first else (second, first)
    assert changed == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_ID: 50}},
    }
    assert text(answer) == "1"
    stdio.send(cancel(50))
    stdio.send(call("open_subscriptions", id=52))
    assert text(stdio.receive()) == "0"
    stdio.send(call("touch_tools", id=53))
    assert text(stdio.receive()) == "0"


def test_end_of_input_ends_the_server_with_code_0(stdio_server: StdioServer) -> None:
    stdio_server.send(call("echo", {"text": "bye"}, id=60))
    assert text(stdio_server.receive()) == "bye"
    stdio_server.close_stdin()
    assert stdio_server.process.wait(timeout=WAIT) == 0


def test_requests_in_flight_are_answered_before_exit(stdio_server: StdioServer) -> None:
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=61)
    stdio_server.send(listen)
    stdio_server.send(call("slow", {"seconds": 0.3, "tag": "flight"}, id=62))
    rest = stdio_server.rest()
    # The call in flight is answered; then the listen ends with its completion result.
    assert [m.get("id") for m in rest if "id" in m] == [62, 61]
    assert rest[-1]["result"] == {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": 61},
    }
    assert stdio_server.process.wait(timeout=WAIT) == 0


def test_stdout_carries_only_json_rpc_and_logs_go_to_stderr(stdio_server: StdioServer) -> None:
    stdio_server.write(b"garbage\n")
    stdio_server.send(call("chatty", id=70))
    stdio_server.send(call("progress", {"steps": 2}, id=71, progressToken=1))
    stdio_server.send({"jsonrpc": "2.0", "id": 72, "result": {"ignored": True}})
    stdio_server.rest()
    assert stdio_server.process.wait(timeout=WAIT) == 0
    assert stdio_server.raw_stdout, "nothing was written"
    for raw in stdio_server.raw_stdout:
        assert raw.endswith(b"\n") and raw.count(b"\n") == 1
        message = json.loads(raw)
        assert message["jsonrpc"] == "2.0"
        assert message.get("id") != 72, "a response from the client must not be answered"
        validate_outgoing(message, "tools/call" if "result" in message else None)
    assert b"chatty was called" in stdio_server.stderr


def test_print_in_a_tool_does_not_corrupt_stdout(stdio_server: StdioServer) -> None:
    stdio_server.send(call("shout", id=80))
    stdio_server.send(call("echo", {"text": "after"}, id=81))
    stdio_server.rest()
    for raw in stdio_server.raw_stdout:
        json.loads(raw)


def test_a_client_that_closes_stdout_gets_one_warning_and_a_clean_end() -> None:
    """The answers have nowhere to go: one warning on stderr, no traceback, and the
    server still reads to the end of its input and exits with 0."""
    process = subprocess.Popen(
        snodo_run("examples/preferences.py:server", "stdio"),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdout.close()  # before the first answer
    lines = [json.dumps(request("tools/list", {}, id=n)).encode() + b"\n" for n in range(3)]
    _, stderr = process.communicate(b"".join(lines), timeout=WAIT)
    said = stderr.decode()
    assert process.returncode == 0, said
    assert "Traceback" not in said and "Exception" not in said, said
    assert said.count("stdout was closed by the client") == 1, said
