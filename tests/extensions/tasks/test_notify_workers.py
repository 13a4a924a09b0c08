"""Notifications across worker processes: two conformance fixtures share a task store
and a state secret; a client holds a listen stream on worker A while requests go to
worker B. With Redis, what B raises (a task's status, a list change, a resource
update) arrives on A's stream, once; with SQLite, B's stay on B and A hears its own.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from snodo.core.http_headers import request_headers
from tests.support.processes import Serving, serving, snodo_run
from tests.support.wire import request

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
WATCHED = "test://watched-resource"


@contextlib.contextmanager
def workers(store_url: str) -> Iterator[tuple[Serving, Serving]]:
    """Two fixture processes sharing ``store_url`` (and, for Redis, the notification bus)."""
    env = {"SNODO_TASK_STORE": store_url, "SNODO_STATE_SECRET": secrets.token_hex(32)}

    def fixture(port: int) -> list[str]:
        where = ("--host", "127.0.0.1", "--port", str(port))
        return snodo_run("tests/conformance/fixture.py:server", "http", *where)

    with serving(fixture, env=env) as a, serving(fixture, env=env) as b:
        yield a, b


def headers(message: dict[str, Any]) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **request_headers(message["method"], message["params"], "2026-07-28"),
    }


def post(to: Serving, message: dict[str, Any]) -> Any:
    response = httpx.post(f"{to.base}/mcp", json=message, headers=headers(message), timeout=10)
    assert response.status_code == 200, response.text
    return response.json()["result"]


def call(to: Serving, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    return post(to, request("tools/call", {"name": tool, "arguments": arguments or {}}, 2))


def events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE stream."""
    for line in lines:
        if line.startswith("data:"):
            yield json.loads(line[5:])


@contextlib.contextmanager
def listening(on: Serving, listen_id: str, wanted: dict[str, Any]) -> Iterator[Iterator[Any]]:
    """A listen stream on one worker; yields its messages after the acknowledgement."""
    params = {"notifications": wanted}
    listen = request("subscriptions/listen", params, listen_id, capabilities=TASKS)
    with (
        httpx.Client(timeout=httpx.Timeout(10, read=10)) as client,
        client.stream("POST", f"{on.base}/mcp", json=listen, headers=headers(listen)) as response,
    ):
        assert response.status_code == 200
        received = events(response.iter_lines())
        ack = next(received)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        yield received


def settle(on: Serving, task_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        found = post(on, request("tasks/get", {"taskId": task_id}, 3, capabilities=TASKS))
        if found["status"] == status:
            return {k: v for k, v in found.items() if k not in ("resultType", "_meta")}
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never became {status}")


def notification(method: str, listen_id: str, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": method,
        "params": {"_meta": {SUBSCRIPTION_ID: listen_id}, **params},
    }


def test_what_worker_b_raises_arrives_on_worker_as_stream_once(redis_url: str) -> None:
    with workers(redis_url) as (a, b):
        created = post(
            b,
            request(
                "tools/call",
                {"name": "confirm_delete", "arguments": {"filename": "a.txt"}},
                1,
                capabilities=TASKS,
            ),
        )
        task_id = created["taskId"]
        settle(b, task_id, "input_required")  # before A listens: no status change in flight
        wanted = {
            "toolsListChanged": True,
            "promptsListChanged": True,
            "resourceSubscriptions": [WATCHED],
            "taskIds": [task_id],
        }
        with listening(a, "on-a", wanted) as on_a, listening(b, "on-b", wanted) as on_b:
            answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
            update = {"taskId": task_id, "inputResponses": answer}
            assert post(b, request("tasks/update", update, 4, capabilities=TASKS)) == {
                "resultType": "complete",
                "_meta": created["_meta"],
            }
            working = next(on_a)
            assert working["method"] == "notifications/tasks"
            assert working["params"]["_meta"] == {SUBSCRIPTION_ID: "on-a"}
            assert working["params"]["status"] == "working"
            assert "inputRequests" not in working["params"]
            completed = settle(b, task_id, "completed")
            assert completed["result"]["content"] == [{"type": "text", "text": "Deleted a.txt"}]
            assert next(on_a) == notification("notifications/tasks", "on-a", **completed)
            # Told on B: none of A's streams are there, and A's count is not B's to give.
            assert call(b, "test_trigger_tool_change")["content"][0]["text"] == (
                "Told 1 subscription(s)."
            )
            assert next(on_a) == notification("notifications/tools/list_changed", "on-a")
            call(b, "test_trigger_resource_update")
            assert next(on_a) == notification(
                "notifications/resources/updated", "on-a", uri=WATCHED
            )
            # B's own stream heard each once: its own notices, never their echo.
            call(a, "test_trigger_prompt_change")
            heard_on_b = [next(on_b) for _ in range(5)]
            assert [m["method"] for m in heard_on_b] == [
                "notifications/tasks",
                "notifications/tasks",
                "notifications/tools/list_changed",
                "notifications/resources/updated",
                "notifications/prompts/list_changed",
            ]
            assert heard_on_b[1] == notification("notifications/tasks", "on-b", **completed)
            assert next(on_a) == notification("notifications/prompts/list_changed", "on-a")


def test_with_sqlite_each_worker_hears_only_itself(tmp_path: Path) -> None:
    with workers(f"sqlite:///{tmp_path / 'tasks.db'}") as (a, b):
        wanted = {"toolsListChanged": True, "promptsListChanged": True}
        with listening(a, "on-a", wanted) as on_a:
            assert call(b, "test_trigger_tool_change")["content"][0]["text"] == (
                "Told 0 subscription(s)."
            )
            assert call(a, "test_trigger_prompt_change")["content"][0]["text"] == (
                "Told 1 subscription(s)."
            )
            # The first thing on A's stream is A's own notice: B's never came.
            assert next(on_a) == notification("notifications/prompts/list_changed", "on-a")
