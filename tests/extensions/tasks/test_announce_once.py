"""A status change is announced once, by the worker whose write made it, even when two
workers race on one task and the store runs the losing writer's change a second time
(as RedisTaskStore does after a WATCH conflict). With a notification bus, a second
announcement would reach every listen stream as a duplicate.

The task belongs to another worker (its record is written straight into the store),
so nothing runs here but the request under test."""

from __future__ import annotations

from typing import Any

from snodo.asking import elicitation
from snodo.extensions.tasks import MemoryTaskStore, TaskRecord, Tasks
from snodo.extensions.tasks.record import Change, advance
from snodo.server import Server
from tests.extensions.tasks.test_engine import Clock, sync
from tests.support.wire import request

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)
ANSWER = {"name": {"action": "accept", "content": {"name": "Ada"}}}


class Contended(MemoryTaskStore):
    """Another writer wins the first attempt of the next update: ``change`` runs on the
    record as it was, the rival's change is written, and ``change`` runs again."""

    rival: Change | None = None

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        rival, self.rival = self.rival, None
        if rival is not None:
            stale = await self.get(task_id)
            assert stale is not None
            change(stale)  # the attempt whose write fails
            await super().update(task_id, rival)
        return await super().update(task_id, change)


async def worker_with_task(clock: Clock) -> tuple[Server, Contended, list[TaskRecord]]:
    """This worker, and a task in ``input_required`` that another worker runs."""
    store = Contended(clock)
    seen: list[TaskRecord] = []
    server = Server("t", "1", extensions=[Tasks(store, clock=clock, on_status=seen.append)])
    await store.create(
        TaskRecord(
            task_id="t1",
            status="input_required",
            created_at=clock(),
            updated_at=clock(),
            ttl_ms=60_000,
            poll_interval_ms=500,
            principal=None,
            owner="elsewhere",
            lease_until=clock() + 30,
            input_requests={"name": dict(NAME)},
            issued=("name",),
        )
    )
    return server, store, seen


async def answer(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = await server.handle(request(method, params, 1, capabilities=TASKS))
    assert reply.response is not None
    result: dict[str, Any] = reply.response["result"]
    return result


@sync
async def test_an_answer_another_worker_delivered_first_is_not_announced_again() -> None:
    clock = Clock()
    server, store, seen = await worker_with_task(clock)
    store.rival = lambda r: advance(r, "working", clock(), input_requests={}, answers=ANSWER)
    await answer(server, "tasks/update", {"taskId": "t1", "inputResponses": ANSWER})
    assert seen == []  # the other worker made the change, and announced it


@sync
async def test_an_uncontended_answer_is_announced_once() -> None:
    server, _, seen = await worker_with_task(Clock())
    await answer(server, "tasks/update", {"taskId": "t1", "inputResponses": ANSWER})
    assert [(r.status, r.answers) for r in seen] == [("working", ANSWER)]


@sync
async def test_a_lost_task_failed_by_another_worker_first_is_not_announced_again() -> None:
    clock = Clock()
    server, store, seen = await worker_with_task(clock)
    clock.now += 31  # the owner's lease lapsed: both workers see it on tasks/get
    lost = {"code": -32603, "message": "lost"}
    store.rival = lambda r: advance(r, "failed", clock(), error=lost, input_requests={})
    found = await answer(server, "tasks/get", {"taskId": "t1"})
    assert found["status"] == "failed" and found["error"] == lost
    assert seen == []
