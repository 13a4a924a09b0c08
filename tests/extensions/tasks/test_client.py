"""Client follows tasks: it declares the extension, polls, answers input through
tasks/update with its MRTR handlers, cancels at its deadline, and hands out a handle
that another client, in another process, against another worker, can resume.

In process (``MemoryTransport``) and against real ``snodo run`` workers over HTTP
(``tests/extensions/tasks/client_server.py``); the wire each client sends is recorded and
checked as literal JSON where it matters.
"""

from __future__ import annotations

import asyncio
import copy
import json
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from snodo.client import (
    Client,
    DeadlineExceeded,
    ProtocolViolation,
    RequestError,
    TooManyRounds,
)
from snodo.client.transports import ClientTransport, HttpTransport, MemoryTransport, OnNotification
from snodo.extensions.tasks import TaskFailed, TaskHandle, TasksClient
from snodo_wire import CallToolResult
from tests.extensions.tasks import client_server
from tests.support.paths import ROOT
from tests.support.processes import Serving, serving, snodo_run

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CITY = {"city": {"action": "accept", "content": {"city": "Oslo"}}}
TARGET = "tests/extensions/tasks/client_server.py:server"


class Recording:
    """Passes every message on and keeps what went out (with its headers) and came back."""

    def __init__(self, inner: ClientTransport) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.received: list[dict[str, Any]] = []

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        self.sent.append(copy.deepcopy(message))
        self.headers.append(dict(headers))
        response = await self.inner.request(message, headers, on_notification)
        self.received.append(response)
        return response

    def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        return self.inner.stream(message, headers)

    async def close(self) -> None:
        await self.inner.close()

    def methods(self) -> list[str]:
        """The methods sent, with runs of tasks/get folded into one."""
        folded: list[str] = []
        for message in self.sent:
            if not (folded and folded[-1] == message["method"] == "tasks/get"):
                folded.append(message["method"])
        return folded

    def bare(self, method: str) -> list[dict[str, Any]]:
        """The params of each ``method`` request, without ``_meta``."""
        return [
            {k: v for k, v in m["params"].items() if k != "_meta"}
            for m in self.sent
            if m["method"] == method
        ]


async def ask(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"city": "Oslo"}}


async def named(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.fixture(scope="module")
def worker() -> Iterator[Serving]:
    """One HTTP worker with a memory task store."""
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as one:
        yield one


@pytest.fixture(params=["memory", "http"])
def connect(request: pytest.FixtureRequest) -> Callable[[], Recording]:
    """Recording transports to one server: in process, or the HTTP worker."""
    if request.param == "memory":
        server = client_server.make()
        return lambda: Recording(MemoryTransport(server))
    url = f"{request.getfixturevalue('worker').base}/mcp"
    return lambda: Recording(HttpTransport(url, timeout=10))


def test_a_task_with_an_input_round_to_its_result(connect: Callable[[], Recording]) -> None:
    transport = connect()

    async def scenario() -> CallToolResult:
        async with Client(transport, elicitation=ask) as client:
            TasksClient(client)
            result: CallToolResult = await client.call_tool("forecast")
            return result

    result = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert result.content[0].text == "Sunny in Oslo"
    assert transport.methods() == ["tools/call", "tasks/get", "tasks/update", "tasks/get"]
    created = transport.received[0]["result"]
    task_id = created["taskId"]
    assert (created["resultType"], created["status"], created["pollIntervalMs"]) == (
        "task",
        "working",
        20,
    )
    assert transport.sent[0]["params"]["_meta"][CAPABILITIES] == {
        "elicitation": {"form": {}},
        **TASKS,
    }
    assert transport.bare("tasks/update") == [{"taskId": task_id, "inputResponses": CITY}]
    assert all(p == {"taskId": task_id} for p in transport.bare("tasks/get"))
    for message, headers in zip(transport.sent[1:], transport.headers[1:], strict=True):
        # ext-tasks/tasks.md, "Streamable HTTP: Routing Headers"
        assert (headers["Mcp-Method"], headers["Mcp-Name"]) == (message["method"], task_id)
        assert message["params"]["_meta"][CAPABILITIES] == {"elicitation": {"form": {}}, **TASKS}


def test_an_mrtr_round_before_the_task_uses_the_same_handlers(
    connect: Callable[[], Recording],
) -> None:
    transport = connect()

    async def scenario() -> str:
        async with Client(transport, elicitation=named) as client:
            TasksClient(client)
            return str((await client.call_tool("greeting")).content[0].text)

    assert asyncio.run(asyncio.wait_for(scenario(), 20)) == "Hello, Ada!"
    assert transport.methods() == ["tools/call", "tools/call", "tasks/get"]
    retry = transport.bare("tools/call")[1]
    assert retry["inputResponses"] == {"name": {"action": "accept", "content": {"name": "Ada"}}}
    assert transport.received[1]["result"]["resultType"] == "task"


def test_the_deadline_cancels_the_task(connect: Callable[[], Recording]) -> None:
    transport = connect()
    probe = connect()

    async def scenario() -> dict[str, Any]:
        async with Client(transport, deadline=0.3) as client:
            TasksClient(client)
            started = time.monotonic()
            with pytest.raises(DeadlineExceeded):
                await client.call_tool("forever")
            assert time.monotonic() - started < 2
        task_id = transport.received[0]["result"]["taskId"]
        async with Client(probe) as other:  # the server's view, through any client
            TasksClient(other)
            for _ in range(200):
                seen = await other.request("tasks/get", {"taskId": task_id})
                if seen["status"] == "cancelled":
                    return seen
                await asyncio.sleep(0.01)
        raise AssertionError("the server never saw the task cancelled")

    seen = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert transport.methods() == ["tools/call", "tasks/get", "tasks/cancel"]
    assert transport.bare("tasks/cancel") == [{"taskId": seen["taskId"]}]
    assert "result" not in seen and "error" not in seen


def test_a_failed_task_raises_its_error(connect: Callable[[], Recording]) -> None:
    async def scenario() -> None:
        async with Client(connect()) as client:
            TasksClient(client)
            with pytest.raises(TaskFailed) as raised:
                await client.call_tool("broken")
        assert isinstance(raised.value, RequestError)  # caught like an immediate error
        assert (raised.value.code, raised.value.message) == (-32603, "disk on fire")

    asyncio.run(asyncio.wait_for(scenario(), 20))


def test_input_the_client_did_not_declare_fails_the_task() -> None:
    server = client_server.make()

    async def scenario() -> None:
        async with Client(MemoryTransport(server)) as client:  # no elicitation handler
            TasksClient(client)
            with pytest.raises(RequestError) as raised:
                await client.call_tool("forecast")
        assert raised.value.code == -32021
        assert raised.value.required_capabilities == {"elicitation": {"form": {}}}

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_manual_mode_steps_through_a_task() -> None:
    server = client_server.make()
    transport = Recording(MemoryTransport(server))

    async def scenario() -> list[Any]:
        steps: list[Any] = []
        async with Client(transport, elicitation=ask) as client:
            TasksClient(client)
            step = await client.call_tool("forecast", manual=True)
            while isinstance(step, TaskHandle):
                steps.append(json.loads(step.to_json()))
                given = CITY if step.input_requests else None
                step = await client.resume(step, given, manual=True)
            steps.append(step.content[0].text)
        return steps

    created, waiting, done = asyncio.run(asyncio.wait_for(scenario(), 10))
    task_id = created["taskId"]
    assert created == {
        "method": "tools/call",
        "taskId": task_id,
        "pollIntervalMs": 20,
        "answered": [],
        "inputRequests": {},
    }
    assert waiting == {
        "method": "tools/call",
        "taskId": task_id,
        "pollIntervalMs": 20,
        "answered": [],
        "inputRequests": {
            "city": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "City?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                },
            }
        },
    }
    assert done == "Sunny in Oslo"
    assert transport.bare("tasks/update") == [{"taskId": task_id, "inputResponses": CITY}]


RESUME = """
import asyncio, sys
from snodo.client import Client
from snodo.extensions.tasks import TaskHandle, TasksClient

async def city(params):
    return {"action": "accept", "content": {"city": "Bergen"}}

async def main(url, saved):
    async with Client.http(url, elicitation=city) as client:
        TasksClient(client)
        result = await client.resume(TaskHandle.from_json(saved))
        print(result.content[0].text)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_a_handle_is_resumed_in_another_process_against_another_worker(tmp_path: Path) -> None:
    env = {
        "SNODO_TASK_STORE": f"sqlite:///{tmp_path / 'tasks.db'}",
        "SNODO_STATE_SECRET": secrets.token_hex(32),
    }

    def command(port: int) -> list[str]:
        return snodo_run(TARGET, "http", "--port", str(port))

    async def start(url: str) -> str:
        async with Client.http(url, elicitation=ask) as client:
            TasksClient(client)
            handle = await client.call_tool("forecast", manual=True)
        assert isinstance(handle, TaskHandle)
        return handle.to_json()

    with serving(command, env=env) as one, serving(command, env=env) as two:
        saved = asyncio.run(asyncio.wait_for(start(f"{one.base}/mcp"), 20))
        resumed = subprocess.run(
            [sys.executable, "-c", RESUME, f"{two.base}/mcp", saved],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "Sunny in Bergen"


def test_a_client_without_tasks_gets_inline_results_and_the_required_error() -> None:
    server = client_server.make()
    transport = Recording(MemoryTransport(server))

    async def scenario() -> None:
        async with Client(transport, elicitation=ask) as client:  # declares no tasks
            assert client.capabilities() == {"elicitation": {"form": {}}}
            assert (await client.call_tool("forecast")).content[0].text == "Sunny in Oslo"
            with pytest.raises(RequestError) as raised:
                await client.call_tool("forever")
        assert raised.value.code == -32021
        assert raised.value.required_capabilities == TASKS

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert "tasks/get" not in transport.methods()  # the server ran forecast inline


class Scripted:
    """A transport whose server answers each method from a script; records the methods."""

    def __init__(self, answers: Mapping[str, dict[str, Any]]) -> None:
        self.answers = answers
        self.methods: list[str] = []

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        self.methods.append(message["method"])
        return {"jsonrpc": "2.0", "id": message["id"], "result": self.answers[message["method"]]}

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise AssertionError("not streamed")
        yield {}

    async def close(self) -> None:
        pass


CREATED = {
    "resultType": "task",
    "taskId": "t-1",
    "status": "working",
    "createdAt": "2026-11-30T10:00:00Z",
    "lastUpdatedAt": "2026-11-30T10:00:00Z",
    "ttlMs": 60000,
    "pollIntervalMs": 10,
}


def test_a_task_in_answer_to_anything_but_tools_call_is_a_violation() -> None:
    transport = Scripted({"resources/read": CREATED})

    async def scenario() -> None:
        async with Client(transport) as client:
            TasksClient(client)
            with pytest.raises(ProtocolViolation, match="resources/read"):
                await client.read_resource("file:///a")
            with pytest.raises(ProtocolViolation, match="resources/read"):
                await client.request("resources/read", {"uri": "file:///a"})

    asyncio.run(scenario())
    assert transport.methods == ["resources/read", "resources/read"]


def test_a_task_the_client_did_not_ask_for_is_a_violation() -> None:
    async def scenario() -> None:
        async with Client(Scripted({"tools/call": CREATED})) as client:  # declares no tasks
            with pytest.raises(ProtocolViolation, match="did not declare"):
                await client.call_tool("t")

    asyncio.run(scenario())


def test_a_malformed_task_state_is_a_violation_and_the_task_is_cancelled() -> None:
    bogus = {**CREATED, "resultType": "complete", "status": "sleeping"}
    transport = Scripted({"tools/call": CREATED, "tasks/get": bogus, "tasks/cancel": {}})

    async def scenario() -> None:
        async with Client(transport) as client:
            TasksClient(client)
            with pytest.raises(ProtocolViolation, match="tasks/get"):
                await client.call_tool("t")

    asyncio.run(scenario())
    assert transport.methods == ["tools/call", "tasks/get", "tasks/cancel"]


def test_a_task_that_keeps_asking_stops_at_max_rounds() -> None:
    class Asking(Scripted):
        async def request(
            self,
            message: dict[str, Any],
            headers: Mapping[str, str],
            on_notification: OnNotification,
        ) -> dict[str, Any]:
            response = await super().request(message, headers, on_notification)
            if message["method"] == "tasks/get":  # a new key every poll
                key = f"k{len(self.methods)}"
                response["result"] = {**response["result"], "inputRequests": {key: QUESTION}}
            return response

    waiting = {**CREATED, "resultType": "complete", "status": "input_required"}
    transport = Asking(
        {"tools/call": CREATED, "tasks/get": waiting, "tasks/update": {}, "tasks/cancel": {}}
    )

    async def scenario() -> None:
        async with Client(transport, elicitation=ask, max_rounds=2) as client:
            TasksClient(client)
            with pytest.raises(TooManyRounds):
                await client.call_tool("t")

    asyncio.run(scenario())
    assert transport.methods[-1] == "tasks/cancel"
    assert transport.methods.count("tasks/update") == 2


QUESTION = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "City?",
        "requestedSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"method": "resources/read", "taskId": "t"}',
        '{"method": "tools/call", "taskId": ""}',
        '{"method": "tools/call", "taskId": "t", "pollIntervalMs": 0}',
        '{"method": "tools/call", "taskId": "t", "answered": [1]}',
        '{"method": "tools/call", "taskId": "t", "inputRequests": []}',
    ],
)
def test_a_handle_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        TaskHandle.from_json(text)


def test_legacy_sessions_never_carry_the_extension(worker: Serving) -> None:
    """snodo serves 2025-11-25 sessions too: a Client in the legacy era declares its
    handlers alone at initialize, and a task-optional tool runs inline."""

    async def scenario() -> tuple[Any, str, str | None]:
        async with Client.http(f"{worker.base}/mcp", era="legacy", elicitation=ask) as client:
            TasksClient(client)
            seen = json.loads((await client.call_tool("capabilities")).content[0].text)
            forecast = str((await client.call_tool("forecast")).content[0].text)
            return seen, forecast, client.era

    seen, forecast, era = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert era == "legacy"
    assert seen == {"elicitation": {"form": {}}}
    assert forecast == "Sunny in Oslo"


def test_a_caller_that_stops_waiting_cancels_the_task() -> None:
    working = {**CREATED, "resultType": "complete"}
    transport = Scripted({"tools/call": CREATED, "tasks/get": working, "tasks/cancel": {}})

    async def scenario() -> None:
        async with Client(transport) as client:
            TasksClient(client)
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("t"), 0.2)

    asyncio.run(scenario())
    assert transport.methods[0] == "tools/call" and transport.methods[-1] == "tasks/cancel"
    assert set(transport.methods[1:-1]) == {"tasks/get"}
