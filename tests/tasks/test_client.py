"""TaskClient follows tasks: polls, answers input through tasks/update with its MRTR
handlers, hands out a storable handle, cancels at its deadline. In process, through
``MemoryTransport``, against a server with a memory task store."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo import elicitation
from snodo.client import Client, ProtocolViolation, RequestError
from snodo.context import Context
from snodo.errors import InternalError
from snodo.result import MISSING, input_required
from snodo.server import Server
from snodo.tasks import MemoryTaskStore, Tasks, background
from snodo.tasks.client import TaskClient, _handle
from snodo.tasks.handle import TaskHandle, TaskTimeout
from snodo.transports.client import MemoryTransport

CITY = elicitation.form(
    "City?", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
)


def make() -> tuple[Server, MemoryTaskStore]:
    store = MemoryTaskStore()
    server = Server("t", "1", tasks=Tasks(store, poll_interval_ms=20, watch_interval=0.01))

    @server.tool(task="optional")
    def forecast() -> Any:
        async def work(ctx: Context) -> Any:
            answer = elicitation.response(ctx, "city", CITY)
            if answer is MISSING:
                return input_required({"city": CITY})
            return f"Sunny in {answer.content['city']}"

        return background(work)

    @server.tool(task="required")
    def forever() -> Any:
        async def work(ctx: Context) -> str:
            await asyncio.sleep(3600)
            return "never"

        return background(work)

    @server.tool(task="optional")
    def broken() -> Any:
        async def work(ctx: Context) -> str:
            raise InternalError("disk on fire")

        return background(work)

    return server, store


async def ask(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"city": "Oslo"}}


def test_a_task_with_an_input_round_to_its_result() -> None:
    server, _ = make()

    async def scenario() -> None:
        client = TaskClient(MemoryTransport(server), elicitation=ask)
        result = await client.call_tool("forecast")
        assert result.content[0].text == "Sunny in Oslo"

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_manual_handle_is_followed_by_another_client() -> None:
    server, _ = make()

    async def scenario() -> None:
        first = TaskClient(MemoryTransport(server), elicitation=ask)
        handle = await first.start_tool("forecast")
        assert isinstance(handle, TaskHandle) and handle.poll_interval_ms == 20
        stored = handle.to_json()
        second = TaskClient(MemoryTransport(server), elicitation=ask)
        result = await second.follow(TaskHandle.from_json(stored))
        assert result.content[0].text == "Sunny in Oslo"

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_input_the_creating_client_did_not_declare_fails_the_task() -> None:
    server, _ = make()

    async def scenario() -> None:
        client = TaskClient(MemoryTransport(server))  # no elicitation handler
        with pytest.raises(RequestError) as raised:
            await client.call_tool("forecast")
        assert raised.value.code == -32021
        assert raised.value.required_capabilities == {"elicitation": {"form": {}}}

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_failed_task_raises_its_error() -> None:
    server, _ = make()

    async def scenario() -> None:
        client = TaskClient(MemoryTransport(server))
        with pytest.raises(RequestError) as raised:
            await client.call_tool("broken")
        assert (raised.value.code, raised.value.message) == (-32603, "disk on fire")

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_the_deadline_cancels_the_task() -> None:
    server, store = make()

    async def scenario() -> None:
        client = TaskClient(MemoryTransport(server), deadline=0.2)
        with pytest.raises(TaskTimeout):
            await client.call_tool("forever")
        for _ in range(100):
            if [r.status for r in store._records.values()] == ["cancelled"]:
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the task was not cancelled")

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_plain_client_declares_nothing_and_a_stray_task_is_refused() -> None:
    server, _ = make()

    async def scenario() -> None:
        plain = Client(MemoryTransport(server), elicitation=ask)
        assert "extensions" not in plain.capabilities()
        assert (await plain.call_tool("forecast")).content[0].text == "Sunny in Oslo"  # inline
        with pytest.raises(RequestError) as raised:
            await plain.call_tool("forever")
        assert raised.value.code == -32021
        assert TaskClient(MemoryTransport(server)).capabilities() == {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
        with pytest.raises(ProtocolViolation):
            _handle("resources/read", {"resultType": "task", "taskId": "t"})

    asyncio.run(asyncio.wait_for(scenario(), 10))
