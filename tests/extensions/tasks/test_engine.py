"""The task engine through ``Server.handle``: literal wire JSON in and out, one process,
a memory store and a clock the test moves."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.errors import InternalError
from snodo.core.result import MISSING, input_required, tool_error
from snodo.extensions.tasks import MemoryTaskStore, TaskRecord, Tasks, background
from snodo.server import Server, State
from snodo_wire_tasks import adapters
from tests.support.wire import request


def engine_of(server: Server) -> Tasks:
    """The task engine of the tasks extension ``server`` offers."""
    extension = server.extensions["io.modelcontextprotocol/tasks"]
    assert isinstance(extension, Tasks)
    return extension


TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}}
NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)


def sync(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on its own loop, bounded."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), 10))

    return run


class Clock:
    def __init__(self) -> None:
        self.now = 1_790_000_000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, seen: list[TaskRecord], max_records: int = 10_000) -> Server:
    store = MemoryTaskStore(clock, max_records=max_records)
    tasks = Tasks(
        store,
        ttl_ms=60_000,
        poll_interval_ms=250,
        lease=30,
        clock=clock,
        watch_interval=0.01,
        on_status=seen.append,
    )
    server = Server("t", "1", extensions=[tasks], state=State(clock=clock))
    gate = asyncio.Event()

    @server.tool(task="optional")
    def hello() -> Any:
        async def work(ctx: Context) -> Any:
            answer = elicitation.response(ctx, "name", NAME)
            if answer is MISSING:
                return input_required({"name": NAME}, request_state=ctx.seal({"round": 1}))
            assert ctx.state_data == {"round": 1}
            return f"Hello, {answer.content['name']}!"

        return background(work)

    @server.tool(task="optional")
    def hello_handed() -> Any:
        """``hello`` with its state handed over by ``state=`` instead of sealed."""

        async def work(ctx: Context) -> Any:
            answer = elicitation.response(ctx, "name", NAME)
            if answer is MISSING:
                return input_required({"name": NAME}, state={"round": 1})
            assert ctx.state_data == {"round": 1}
            return f"Hello, {answer.content['name']}!"

        return background(work)

    @server.tool(task="required")
    def held() -> Any:
        async def work(ctx: Context) -> str:
            await gate.wait()
            return "released"

        return background(work)

    @server.tool(task="optional")
    def broken() -> Any:
        async def work(ctx: Context) -> str:
            raise InternalError("no disk")

        return background(work)

    @server.tool(task="optional")
    def sulky() -> Any:
        async def work(ctx: Context) -> Any:
            return tool_error("nope")

        return background(work)

    return server


async def call(server: Server, method: str, params: dict[str, Any], caps: Any = TASKS) -> Any:
    reply = await server.handle(request(method, params, 7, capabilities=caps))
    assert reply.response is not None
    return reply.response


async def settled(server: Server, task_id: str, status: str) -> dict[str, Any]:
    for _ in range(1000):  # 10 s: generous for a loaded machine, still bounded
        got = (await call(server, "tasks/get", {"taskId": task_id}))["result"]
        if got["status"] == status:
            return dict(got)
        await asyncio.sleep(0.01)
    raise AssertionError(f"never {status}")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.mark.parametrize("tool", ["hello", "hello_handed"])
@sync
async def test_an_input_round_inside_a_task(clock: Clock, tool: str) -> None:
    seen: list[TaskRecord] = []
    server = make(clock, seen)
    created = await call(server, "tools/call", {"name": tool, "arguments": {}})
    task_id = created["result"]["taskId"]
    assert created == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "resultType": "task",
            "taskId": task_id,
            "status": "working",
            "createdAt": "2026-09-21T14:13:20.000Z",
            "lastUpdatedAt": "2026-09-21T14:13:20.000Z",
            "ttlMs": 60_000,
            "pollIntervalMs": 250,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "t", "version": "1"}},
        },
    }
    waiting = await settled(server, task_id, "input_required")
    assert waiting["inputRequests"] == {"name": dict(NAME)}
    assert "requestState" not in waiting
    adapters.get_task_result.validate_python(waiting)
    # An unknown key is ignored, whatever it holds; the outstanding one is taken.
    ack = await call(
        server,
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {
                "nobody": {"ignored": True},
                "name": {"action": "accept", "content": {"name": "Luca"}},
            },
        },
    )
    assert ack["result"] == {"resultType": "complete", "_meta": ack["result"]["_meta"]}
    done = await settled(server, task_id, "completed")
    assert done["result"] == {"content": [{"type": "text", "text": "Hello, Luca!"}]}
    assert [r.status for r in seen] == ["working", "input_required", "working", "completed"]


@sync
async def test_a_bad_answer_to_an_outstanding_key_is_refused(clock: Clock) -> None:
    server = make(clock, [])
    task_id = (await call(server, "tools/call", {"name": "hello"}))["result"]["taskId"]
    await settled(server, task_id, "input_required")
    bad = await call(server, "tasks/update", {"taskId": task_id, "inputResponses": {"name": 5}})
    assert bad["error"]["code"] == -32602
    assert (await settled(server, task_id, "input_required"))["inputRequests"]


@sync
async def test_errors_fail_and_tool_errors_complete(clock: Clock) -> None:
    server = make(clock, [])
    broken = (await call(server, "tools/call", {"name": "broken"}))["result"]["taskId"]
    failed = await settled(server, broken, "failed")
    assert failed["error"] == {"code": -32603, "message": "no disk"} and "result" not in failed
    sulky = (await call(server, "tools/call", {"name": "sulky"}))["result"]["taskId"]
    completed = await settled(server, sulky, "completed")
    assert completed["result"] == {"content": [{"type": "text", "text": "nope"}], "isError": True}


@sync
async def test_cancel_is_cooperative_and_idempotent(clock: Clock) -> None:
    server = make(clock, [])
    task_id = (await call(server, "tools/call", {"name": "held"}))["result"]["taskId"]
    for _ in range(2):  # the second one finds it terminal: the same empty ack
        ack = await call(server, "tasks/cancel", {"taskId": task_id})
        assert set(ack["result"]) == {"resultType", "_meta"}
        assert ack["result"]["resultType"] == "complete"
        await settled(server, task_id, "cancelled")


@sync
async def test_without_the_extension(clock: Clock) -> None:
    server = make(clock, [])
    plain: dict[str, Any] = {"elicitation": {}}
    required = await call(server, "tools/call", {"name": "held"}, plain)
    assert required["error"]["code"] == -32021
    assert required["error"]["data"] == {
        "requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    }
    for method in ("tasks/get", "tasks/cancel"):
        assert (await call(server, method, {"taskId": "x"}, plain))["error"]["code"] == -32021
    inline = await call(server, "tools/call", {"name": "sulky"}, plain)
    assert inline["result"]["resultType"] == "complete" and inline["result"]["isError"] is True
    listen = await call(
        server, "subscriptions/listen", {"notifications": {"taskIds": ["x"]}}, plain
    )
    assert listen["error"]["code"] == -32021


@sync
async def test_unknown_expired_and_other_principals_tasks_are_not_found(clock: Clock) -> None:
    server = make(clock, [])
    task_id = (await call(server, "tools/call", {"name": "held"}))["result"]["taskId"]
    other = await server.handle(
        request("tasks/get", {"taskId": task_id}, 3, capabilities=TASKS), principal="mallory"
    )
    assert other.response is not None and other.response["error"]["code"] == -32602
    assert (await call(server, "tasks/get", {"taskId": "nope"}))["error"]["code"] == -32602
    clock.now += 61
    gone = await call(server, "tasks/get", {"taskId": task_id})
    assert gone["error"] == {"code": -32602, "message": "Failed to retrieve task: Task not found"}


@sync
async def test_a_lapsed_lease_fails_the_task(clock: Clock) -> None:
    seen: list[TaskRecord] = []
    server = make(clock, seen)
    task_id = (await call(server, "tools/call", {"name": "held"}))["result"]["taskId"]
    record = seen[0]
    # The owner is gone: another worker's engine over the same store, past the lease.
    store = engine_of(server).store
    other = Tasks(store, clock=clock)
    stranger = Server("t", "1", extensions=[other], state=State(clock=clock))
    clock.now = record.lease_until + 1
    lost = await call(stranger, "tasks/get", {"taskId": task_id})
    assert lost["result"]["status"] == "failed"
    assert lost["result"]["error"] == {
        "code": -32603,
        "message": "The worker running this task stopped",
    }


@sync
async def test_status_notifications_on_a_listen_stream(clock: Clock) -> None:
    server = make(clock, [])
    task_id = (await call(server, "tools/call", {"name": "hello"}))["result"]["taskId"]
    sent: list[dict[str, Any]] = []
    reply = await server.handle(
        request(
            "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, 5, capabilities=TASKS
        ),
        emit=sent.append,
    )
    assert reply.subscription is not None
    assert sent[0]["params"]["notifications"] == {"taskIds": [task_id]}
    await settled(server, task_id, "input_required")
    # The store is written first, the notice follows on the stream: wait for it too.
    for _ in range(1000):  # 10 s at most, as settled
        tasks = [m["params"] for m in sent if m["method"] == "notifications/tasks"]
        if tasks and tasks[-1]["status"] == "input_required":
            break
        await asyncio.sleep(0.01)
    assert tasks and tasks[-1]["status"] == "input_required"
    assert tasks[-1]["inputRequests"] == {"name": dict(NAME)}
    assert tasks[-1]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 5}
    many = {"notifications": {"taskIds": [str(i) for i in range(257)]}}
    assert (await call(server, "subscriptions/listen", many))["error"]["code"] == -32602


@sync
async def test_discover_advertises_the_extension(clock: Clock) -> None:
    server = make(clock, [])
    found = await call(server, "server/discover", {})
    assert found["result"]["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    bare = Server("b", "1")
    assert "extensions" not in (await call(bare, "server/discover", {}))["result"]["capabilities"]
    assert (await call(bare, "tasks/get", {"taskId": "x"}))["error"]["code"] == -32601


@sync
async def test_a_full_store_refuses_a_new_task_until_one_finishes(clock: Clock) -> None:
    server = make(clock, [], max_records=2)
    running = [
        (await call(server, "tools/call", {"name": "held", "arguments": {}}))["result"]["taskId"]
        for _ in range(2)
    ]
    refused = await call(server, "tools/call", {"name": "held", "arguments": {}})
    assert refused["error"] == {
        "code": -32603,
        "message": "Too many unfinished tasks; try again later",
    }
    await call(server, "tasks/cancel", {"taskId": running[0]})
    await settled(server, running[0], "cancelled")
    again = await call(server, "tools/call", {"name": "held", "arguments": {}})
    assert again["result"]["resultType"] == "task"  # the cancelled one made room
    got = await call(server, "tasks/get", {"taskId": running[0]})
    assert got["error"]["code"] == -32602
