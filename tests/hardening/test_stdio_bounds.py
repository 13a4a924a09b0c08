"""stdio keeps nothing per message, answers every request, and reads any stdin: against
real ``snodo run ... --transport stdio`` processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT
from tests.support.processes import snodo_run
from tests.support.transport_server import StdioServer
from tests.support.transport_server import command as snodo_command
from tests.support.wire import request

NOTIFICATIONS = 100_000


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def call(name: str, arguments: dict[str, Any], id: int | str) -> dict[str, Any]:
    return request("tools/call", {"name": name, "arguments": arguments}, id=id)


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def text(message: dict[str, Any]) -> str:
    return str(message["result"]["content"][0]["text"])


def answer_to(server: StdioServer, request_id: int) -> dict[str, Any]:
    """The answer to ``request_id``, past the -32600 answers to unusable ids."""
    while (message := server.receive(timeout=120)).get("id") != request_id:
        assert message["error"]["code"] == -32600, message
    return message


def test_notifications_and_unusable_ids_leave_memory_flat() -> None:
    server = StdioServer()
    try:
        progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
        unusable = {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list", "params": {}}
        warm = line(progress) * 5_000 + line(unusable) * 500 + line(call("echo", {"text": "a"}, 1))
        server.write(warm)
        assert text(answer_to(server, 1)) == "a"
        before = rss_bytes(server.process.pid)
        batch = line(progress) * 1_000
        for _ in range(NOTIFICATIONS // 1_000):
            server.write(batch)
        server.write(line(unusable) * 10_000)
        server.write(line(call("echo", {"text": "b"}, 2)))
        assert text(answer_to(server, 2)) == "b"
        grown = rss_bytes(server.process.pid) - before
        assert grown < 20 * 1024 * 1024, f"RSS grew {grown / 2**20:.1f} MiB"
        assert server.rest() == []
        assert server.process.wait(timeout=10) == 0
    finally:
        server.stop()


def test_two_requests_sharing_an_id_are_both_answered_before_exit() -> None:
    server = StdioServer()
    try:
        server.write(line(call("slow", {"seconds": 0.5, "tag": "first"}, 7)))
        server.write(line(call("echo", {"text": "second"}, 7)))
        answers = server.rest(timeout=10)
        assert sorted(text(m) for m in answers if m.get("id") == 7) == ["second", "slept 0.5"]
        assert server.process.wait(timeout=10) == 0
    finally:
        server.stop()


def test_an_overflowing_number_on_stdio_is_a_parse_error() -> None:
    server = StdioServer()
    try:
        server.write(b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"n":1e400}}\n')
        assert server.receive() == {
            "jsonrpc": "2.0",
            "error": {"code": -32700, "message": "Parse error: invalid JSON"},
        }
        assert server.rest() == []
    finally:
        server.stop()


def test_stdin_from_a_regular_file_is_answered_line_by_line(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b"".join(line(call("echo", {"text": str(i)}, i)) for i in range(50)) + b"not json\n"
    )
    with requests.open("rb") as stdin:
        done = subprocess.run(
            snodo_command("stdio"),
            cwd=ROOT,
            stdin=stdin,
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(raw) for raw in done.stdout.splitlines()]
    assert sorted(text(m) for m in answers if "result" in m) == sorted(str(i) for i in range(50))
    assert [m["error"]["code"] for m in answers if "error" in m] == [-32700]


def test_stdin_from_dev_null_ends_at_once() -> None:
    """It used to wait forever: the loop's readiness poll on /dev/null never fires."""
    done = subprocess.run(
        snodo_command("stdio"),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b""), done.stderr.decode()


def test_listen_streams_are_capped_per_process() -> None:
    listen = {"notifications": {"toolsListChanged": True}}
    lines = b"".join(line(request("subscriptions/listen", listen, id=i)) for i in (1, 2, 3))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    process = subprocess.Popen(
        snodo_run("tests/hardening/server.py:few_streams", "stdio"),
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(lines)
        process.stdin.flush()
        seen = [json.loads(process.stdout.readline()) for _ in range(3)]
        acknowledged = sorted(
            m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
            for m in seen
            if m.get("method") == "notifications/subscriptions/acknowledged"
        )
        refused = [m for m in seen if "error" in m]
        assert acknowledged == [1, 2]
        assert refused == [
            {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {
                    "code": -32603,
                    "message": "Too many open subscriptions/listen streams; try again later",
                },
            }
        ]
        # Closing a stream makes room for another.
        process.stdin.write(line(cancel) + line(request("subscriptions/listen", listen, id=4)))
        process.stdin.flush()
        again = json.loads(process.stdout.readline())
        assert again["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 4
        process.stdin.close()
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.wait()
        assert process.stdout is not None
        process.stdout.close()
