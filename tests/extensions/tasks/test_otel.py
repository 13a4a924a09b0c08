"""Task lifecycle spans, task metrics and task log lines, through the in-memory exporters."""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.errors import InternalError
from snodo.core.observe import QUIET, Quiet
from snodo.core.result import MISSING, input_required
from snodo.extensions.tasks import MemoryTaskStore, Tasks, TaskStore, background
from snodo.extensions.tasks.observe import QUIET_TASKS, task_observer
from snodo.extensions.tasks.otel import TaskRuns
from snodo.extensions.tasks.record import TaskView
from snodo.server import Server
from tests.observe.otel_support import Observed, observed
from tests.support.wire import request

GUARD = 60.0
"""Seconds before a hung story fails: no time asserted, room for a busy machine."""


def engine_of(server: Server) -> Tasks:
    """The task engine of the tasks extension ``server`` offers."""
    extension = server.extensions["io.modelcontextprotocol/tasks"]
    assert isinstance(extension, Tasks)
    return extension


TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)
LUCA = {"name": {"action": "accept", "content": {"name": "Luca"}}}


def task_server(observer: Any, store: TaskStore, watch_interval: float = 0.01) -> Server:
    """A worker over ``store``: ``hello`` asks once, ``held`` waits, ``broken`` fails."""
    tasks = Tasks(store, poll_interval_ms=10, watch_interval=watch_interval)
    server = Server("t", "1", extensions=[tasks], observer=observer)
    gate = asyncio.Event()

    @server.tool(task="optional")
    def hello() -> Any:
        async def work(ctx: Context) -> Any:
            answer = elicitation.response(ctx, "name", NAME)
            if answer is MISSING:
                return input_required({"name": NAME})
            return f"Hello, {answer.content['name']}!"

        return background(work)

    @server.tool(task="required")
    def held() -> Any:
        async def work(ctx: Context) -> str:
            await gate.wait()
            return "released"

        return background(work)

    @server.tool(task="required")
    def broken() -> Any:
        async def work(ctx: Context) -> str:
            raise InternalError("no disk")

        return background(work)

    return server


async def call(server: Server, method: str, params: dict[str, Any], id: int = 7) -> Any:
    reply = await server.handle(request(method, params, id, capabilities=TASKS))
    assert reply.response is not None
    return reply.response["result"]


async def settled(server: Server, task_id: str, status: str) -> None:
    for _ in range(300):
        if (await call(server, "tasks/get", {"taskId": task_id}))["status"] == status:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {status}")


async def owner_done(server: Server) -> None:
    """Wait until the owner's run (and its span) has ended."""
    tasks = engine_of(server)
    for _ in range(300):
        if not tasks._running:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run never ended")


def named(seen: Observed, name: str) -> list[ReadableSpan]:
    return [span for span in seen.spans() if span.name == name]


def gauge(seen: Observed) -> dict[str, int]:
    return {a["snodo.task.status"]: p.value for a, p in seen.points("snodo.tasks")}


async def gauge_settled(seen: Observed, expected: dict[str, int]) -> dict[str, int]:
    """The gauge once it reads ``expected`` (the store's status is written before the
    observer hears of it), or as it last read."""
    for _ in range(300):
        read = gauge(seen)
        if read == expected:
            break
        await asyncio.sleep(0.01)
    return read


def ended(seen: Observed) -> dict[str, int]:
    return {a["snodo.task.status"]: p.value for a, p in seen.points("snodo.tasks.ended")}


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(event.name, dict(event.attributes or {})) for event in span.events]


def ids(span: ReadableSpan) -> tuple[int, int]:
    assert span.context is not None
    return span.context.trace_id, span.context.span_id


def test_a_task_with_one_input_round_is_one_span_linked_to_its_update() -> None:
    seen = observed()
    server = task_server(seen.observer, MemoryTaskStore())

    async def story() -> tuple[str, dict[str, int]]:
        task_id = (await call(server, "tools/call", {"name": "hello"}))["taskId"]
        await settled(server, task_id, "input_required")
        waiting = await gauge_settled(seen, {"working": 0, "input_required": 1})
        assert await call(server, "tasks/update", {"taskId": task_id, "inputResponses": LUCA})
        await settled(server, task_id, "completed")
        await owner_done(server)
        return task_id, waiting

    task_id, waiting = asyncio.run(asyncio.wait_for(story(), GUARD))
    assert waiting == {"working": 0, "input_required": 1}

    [create] = named(seen, "tools/call hello")
    [update] = named(seen, "tasks/update")
    [run] = named(seen, "task hello")
    assert create.attributes is not None and update.attributes is not None
    assert create.attributes["snodo.task.id"] == task_id
    assert create.attributes["snodo.result.type"] == "task"
    assert update.attributes["snodo.task.id"] == task_id
    assert all(s.attributes and s.attributes["snodo.task.id"] == task_id for s in seen.spans())

    assert run.kind == SpanKind.INTERNAL
    assert run.parent is not None
    assert (run.parent.trace_id, run.parent.span_id) == ids(create)
    assert dict(run.attributes or {}) == {
        "snodo.task.id": task_id,
        "gen_ai.tool.name": "hello",
        "snodo.task.status": "completed",
        "snodo.task.input_rounds": 1,
    }
    assert run.status.status_code == StatusCode.UNSET
    assert events(run) == [
        ("snodo.task.status", {"snodo.task.status": "input_required", "snodo.task.input_round": 1}),
        ("snodo.task.status", {"snodo.task.status": "working"}),
        ("snodo.task.status", {"snodo.task.status": "completed"}),
    ]
    assert [(link.context.trace_id, link.context.span_id) for link in run.links] == [ids(update)]
    # The run ends after the call that created it: it outlives its parent.
    assert run.end_time is not None and create.end_time is not None
    assert run.end_time > create.end_time

    assert gauge(seen) == {"working": 0, "input_required": 0}
    assert ended(seen) == {"completed": 1}
    [(attributes, duration)] = seen.points("snodo.task.duration")
    assert attributes == {"snodo.task.status": "completed"} and duration.count == 1


class SlowToCancel(MemoryTaskStore):
    """Writes a ``cancelled`` status in 0.3 s, so the worker's watcher, polling every
    50 ms, sees the cancel request while the run is still ending."""

    async def update(self, task_id: str, change: Any) -> Any:
        current = await self.get(task_id)
        changed = None if current is None else change(current)
        if changed is not None and changed.status == "cancelled":
            await asyncio.sleep(0.3)
        return await super().update(task_id, change)


def test_a_cancel_both_asked_and_watched_ends_the_run_once_inside_its_span() -> None:
    # The cancel handler stops the run, and the watcher, seeing the request recorded,
    # would stop it again while it writes its end: the run is stopped once.
    seen = observed()
    server = task_server(seen.observer, SlowToCancel(), watch_interval=0.05)

    async def story() -> None:
        task_id = (await call(server, "tools/call", {"name": "held"}))["taskId"]
        await asyncio.sleep(0.02)  # the work has started, and waits
        await call(server, "tasks/cancel", {"taskId": task_id}, id=8)
        await settled(server, task_id, "cancelled")
        await owner_done(server)

    asyncio.run(asyncio.wait_for(story(), GUARD))
    [run] = named(seen, "task held")
    assert run.attributes is not None
    assert run.attributes["snodo.task.status"] == "cancelled"
    assert events(run) == [("snodo.task.status", {"snodo.task.status": "cancelled"})]
    assert ended(seen) == {"cancelled": 1}


def test_a_cancelled_task_links_the_cancel_and_ends_cancelled() -> None:
    seen = observed()
    server = task_server(seen.observer, MemoryTaskStore())

    async def story() -> str:
        task_id = (await call(server, "tools/call", {"name": "held"}))["taskId"]
        assert gauge(seen) == {"working": 1}
        await asyncio.sleep(0.02)  # the work has started, and waits
        await call(server, "tasks/cancel", {"taskId": task_id}, id=8)
        await call(server, "tasks/cancel", {"taskId": task_id}, id=9)  # no second link
        await settled(server, task_id, "cancelled")
        await owner_done(server)
        return task_id

    task_id = asyncio.run(asyncio.wait_for(story(), GUARD))
    [create] = named(seen, "tools/call held")
    first, _ = named(seen, "tasks/cancel")
    [run] = named(seen, "task held")
    assert run.parent is not None and run.parent.span_id == ids(create)[1]
    assert run.attributes is not None
    assert run.attributes["snodo.task.id"] == task_id
    assert run.attributes["snodo.task.status"] == "cancelled"
    assert run.attributes["snodo.task.input_rounds"] == 0
    assert "error.type" not in run.attributes
    assert events(run) == [("snodo.task.status", {"snodo.task.status": "cancelled"})]
    assert [(link.context.trace_id, link.context.span_id) for link in run.links] == [ids(first)]
    assert gauge(seen) == {"working": 0}
    assert ended(seen) == {"cancelled": 1}


def test_a_task_cancelled_before_its_work_began_has_no_run_but_is_counted() -> None:
    seen = observed()
    server = task_server(seen.observer, MemoryTaskStore())

    async def story() -> None:
        task_id = (await call(server, "tools/call", {"name": "held"}))["taskId"]
        await call(server, "tasks/cancel", {"taskId": task_id})  # before the loop ran it
        await settled(server, task_id, "cancelled")

    asyncio.run(asyncio.wait_for(story(), GUARD))
    assert named(seen, "task held") == []
    assert gauge(seen) == {"working": 0}
    assert ended(seen) == {"cancelled": 1}


def test_a_failed_task_records_its_error_code() -> None:
    seen = observed()
    server = task_server(seen.observer, MemoryTaskStore())

    async def story() -> None:
        task_id = (await call(server, "tools/call", {"name": "broken"}))["taskId"]
        await settled(server, task_id, "failed")
        await owner_done(server)

    asyncio.run(asyncio.wait_for(story(), GUARD))
    [run] = named(seen, "task broken")
    assert run.attributes is not None
    assert run.attributes["snodo.task.status"] == "failed"
    assert run.attributes["error.type"] == "-32603"
    assert run.status.status_code == StatusCode.ERROR
    assert ended(seen) == {"failed": 1}


def test_across_workers_each_counts_its_own_changes_and_the_owner_links_the_update() -> None:
    store = MemoryTaskStore()
    one, two = observed(), observed()
    owner, other = task_server(one.observer, store), task_server(two.observer, store)

    async def story() -> None:
        task_id = (await call(owner, "tools/call", {"name": "hello"}))["taskId"]
        await settled(other, task_id, "input_required")
        assert await call(other, "tasks/update", {"taskId": task_id, "inputResponses": LUCA})
        await settled(other, task_id, "completed")
        await owner_done(owner)

    asyncio.run(asyncio.wait_for(story(), GUARD))
    # The owner created it (+1 working), asked (-1 working, +1 input_required) and
    # completed it (-1 working); the other worker resumed it (-1 input_required, +1
    # working). Each worker's figures are its own; their sum is the whole.
    assert gauge(one) == {"working": -1, "input_required": 1}
    assert gauge(two) == {"input_required": -1, "working": 1}
    assert ended(one) == {"completed": 1} and ended(two) == {}
    assert named(two, "task hello") == []
    [run] = named(one, "task hello")
    [update] = named(two, "tasks/update")
    assert [(link.context.trace_id, link.context.span_id) for link in run.links] == [ids(update)]
    assert [e[1]["snodo.task.status"] for e in events(run)] == [
        "input_required",
        "working",
        "completed",
    ]


def test_log_lines_carry_the_task_id_and_the_run_has_its_own_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("test.snodo.tasks.requests")
    seen = observed(request_log=logger)
    server = task_server(seen.observer, MemoryTaskStore())

    async def story() -> str:
        task_id = (await call(server, "tools/call", {"name": "hello"}))["taskId"]
        await settled(server, task_id, "input_required")
        await call(server, "tasks/update", {"taskId": task_id, "inputResponses": LUCA})
        await settled(server, task_id, "completed")
        await owner_done(server)
        return task_id

    with caplog.at_level(logging.INFO, logger=logger.name):
        task_id = asyncio.run(asyncio.wait_for(story(), GUARD))
    lines = [json.loads(record.getMessage()) for record in caplog.records]
    requests = [line for line in lines if line["event"] == "mcp.request"]
    assert requests and all(line["snodo.task.id"] == task_id for line in requests)
    assert requests[0]["mcp.method.name"] == "tools/call"
    assert requests[0]["snodo.result.type"] == "task"
    [task] = [line for line in lines if line["event"] == "mcp.task"]
    [run] = named(seen, "task hello")
    trace_id, span_id = ids(run)
    assert task == {
        "time": task["time"],
        "event": "mcp.task",
        "snodo.task.id": task_id,
        "gen_ai.tool.name": "hello",
        "snodo.task.status": "completed",
        "snodo.task.input_rounds": 1,
        "duration_ms": task["duration_ms"],
        "trace_id": f"{trace_id:032x}",
        "span_id": f"{span_id:016x}",
    }


def test_an_unobserved_engine_leaves_no_trace_links() -> None:
    store = MemoryTaskStore()
    server = task_server(QUIET, store)

    async def story() -> None:
        task_id = (await call(server, "tools/call", {"name": "hello"}))["taskId"]
        await settled(server, task_id, "input_required")
        await call(server, "tasks/update", {"taskId": task_id, "inputResponses": LUCA})
        await settled(server, task_id, "completed")
        record = await store.get(task_id)
        assert record is not None and record.trace_links == ()

    asyncio.run(asyncio.wait_for(story(), GUARD))


def test_an_observer_set_after_construction_reaches_the_engine() -> None:
    seen = observed()
    server = task_server(QUIET, MemoryTaskStore())
    assert engine_of(server).observer is QUIET_TASKS
    server.observer = seen.observer
    runs = engine_of(server).observer
    assert isinstance(runs, TaskRuns) and runs.tracer is seen.observer.tracer


class _ReportsTasks(Quiet):
    """A server observer of its own that also observes tasks (``TaskObserver``)."""

    def __init__(self) -> None:
        self.changes: list[tuple[str, str | None]] = []

    def task_changed(self, record: TaskView, previous: str | None) -> None:
        self.changes.append((record.status, previous))

    def task_run(self, task_id: str, tool: str) -> AbstractContextManager[None]:
        return nullcontext()

    def task_resumed(self, record: TaskView) -> None:
        pass

    def task_mark(self) -> str | None:
        return None


class SlowToAsk(MemoryTaskStore):
    """Writes an ``input_required`` status at once but says it has 0.3 s later, so a
    cancel lands while the run waits on the write."""

    async def update(self, task_id: str, change: Any) -> Any:
        written = await super().update(task_id, change)
        if written is not None and written.status == "input_required":
            await asyncio.sleep(0.3)
        return written


ASKED_THEN_CANCELLED = [
    ("working", None),
    ("input_required", "working"),
    ("cancelled", "input_required"),
]
"""What an observer hears of a task that asked, then was cancelled: (status, the one before)."""


def test_a_status_written_while_the_run_is_cancelled_is_still_told() -> None:
    own = _ReportsTasks()
    server = task_server(own, SlowToAsk())

    async def story() -> None:
        task_id = (await call(server, "tools/call", {"name": "hello"}))["taskId"]
        await asyncio.sleep(0.1)  # the run is writing its question
        await call(server, "tasks/cancel", {"taskId": task_id})
        await settled(server, task_id, "cancelled")
        await owner_done(server)

    asyncio.run(asyncio.wait_for(story(), GUARD))
    assert own.changes == ASKED_THEN_CANCELLED


def test_an_observer_of_tasks_is_told_of_them_and_another_hears_none() -> None:
    """An observer with the four task methods gets the tasks as they are; one without
    them (any other ``Observer``) observes no task."""
    own = _ReportsTasks()
    server = task_server(own, MemoryTaskStore())
    assert engine_of(server).observer is own

    async def story() -> None:
        task_id = (await call(server, "tools/call", {"name": "hello"}))["taskId"]
        await settled(server, task_id, "input_required")
        await call(server, "tasks/cancel", {"taskId": task_id})
        await settled(server, task_id, "cancelled")
        await owner_done(server)

    asyncio.run(asyncio.wait_for(story(), GUARD))
    assert own.changes == ASKED_THEN_CANCELLED
    assert task_observer(Quiet()) is QUIET_TASKS
