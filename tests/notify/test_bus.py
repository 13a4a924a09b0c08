"""Notification buses in one process: the notice format, local fan-out, and two
``RedisBus`` workers on a real redis-server, through ``Server.handle`` with literal
notification JSON. Redis outages and the transports' lifecycle are here too."""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import secrets
import shutil
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from hypothesis import given
from hypothesis import strategies as st

from snodo.extensions.tasks import MemoryTaskStore, TaskRecord, Tasks
from snodo.server import Server
from snodo.server.notify_bus import LocalBus, Notice, RedisBus, notification_bus
from snodo.server.subscriptions import Subscriptions
from snodo.transports.http import HttpApp
from snodo.transports.stdio import serve_stdio
from tests.replay.conftest import answers_ping
from tests.support.processes import free_port, stop
from tests.support.wire import request

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
EVERYTHING = {
    "toolsListChanged": True,
    "promptsListChanged": True,
    "resourceSubscriptions": ["file:///project/"],
}


def sync(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on its own loop, bounded; no task may outlive it."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        async def bounded() -> None:
            await asyncio.wait_for(test(*args, **kwargs), 20)
            assert asyncio.all_tasks() == {asyncio.current_task()}, "a task outlived the test"

        asyncio.run(bounded())

    return run


def worker(bus: Any = None) -> Server:
    """A server with one tool, resource and prompt, so every list can change."""
    server = Server("w", "1", notifications=bus, extensions=[Tasks(MemoryTaskStore())])
    server.tool(lambda: "x", name="t")
    server.resource("file:///project/readme")(lambda: "r")
    server.prompt(lambda: "p", name="p")
    return server


async def listen(
    server: Server, listen_id: str, notifications: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Open a listen stream on ``server``; returns what it receives, acknowledgement first."""
    sent: list[dict[str, Any]] = []
    reply = await server.handle(
        request(
            "subscriptions/listen",
            {"notifications": notifications or EVERYTHING},
            listen_id,
            capabilities=TASKS,
        ),
        emit=sent.append,
    )
    assert reply.subscription is not None
    assert sent[0]["method"] == "notifications/subscriptions/acknowledged"
    return sent


def list_changed(kind: str, listen_id: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": f"notifications/{kind}/list_changed",
        "params": {"_meta": {SUBSCRIPTION_ID: listen_id}},
    }


def updated(uri: str, listen_id: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"_meta": {SUBSCRIPTION_ID: listen_id}, "uri": uri},
    }


async def until(check: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "never happened"
        await asyncio.sleep(0.01)


def record(task_id: str) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        status="completed",
        created_at=1_790_000_000.0,
        updated_at=1_790_000_001.5,
        ttl_ms=60_000,
        poll_interval_ms=500,
        principal=None,
        owner="w",
        lease_until=1_790_000_030.0,
        result={"content": [{"type": "text", "text": "done"}], "isError": False},
    )


# --- the notice on the wire ----------------------------------------------------------------


@pytest.mark.parametrize(
    "notice",
    [
        Notice("list", "toolsListChanged"),
        Notice("resource", "file:///a b/ü"),
        Notice("task", "t-1", {"taskId": "t-1", "status": "working"}),
    ],
)
def test_a_notice_survives_the_channel(notice: Notice) -> None:
    assert Notice.decode(notice.encode("me")) == ("me", notice)
    assert Notice.decode(notice.encode("me").encode()) == ("me", notice)


def test_the_published_form_is_compact_json() -> None:
    encoded = Notice("task", "t", {"taskId": "t"}).encode("o1")
    assert encoded == '{"origin":"o1","kind":"task","key":"t","task":{"taskId":"t"}}'
    assert Notice("list", "promptsListChanged").encode("o2") == (
        '{"origin":"o2","kind":"list","key":"promptsListChanged"}'
    )


@pytest.mark.parametrize(
    "raw",
    [
        "[]",
        '{"origin":"o","kind":"list"}',
        '{"origin":"o","kind":"other","key":"k"}',
        '{"origin":1,"kind":"list","key":"k"}',
        '{"origin":"o","kind":"task","key":"t"}',
        '{"origin":"o","kind":"list","key":"k","task":{}}',
        "{",
        b"\xff",
    ],
)
def test_a_malformed_message_is_a_value_error(raw: str | bytes) -> None:
    with pytest.raises(ValueError):
        Notice.decode(raw)


@given(st.one_of(st.binary(), st.text(), st.recursive(st.none() | st.text(), st.lists)))
def test_decoding_anything_gives_a_notice_or_a_value_error(raw: Any) -> None:
    data = raw if isinstance(raw, str | bytes) else json.dumps(raw)
    try:
        origin, notice = Notice.decode(data)
    except ValueError:
        return
    assert isinstance(origin, str) and isinstance(notice, Notice)


def test_bus_urls() -> None:
    assert isinstance(notification_bus("memory:"), LocalBus)
    bus = notification_bus("redis://127.0.0.1:1/2", channel="c")
    assert isinstance(bus, RedisBus) and bus.channel == "c"
    for bad in ("sqlite:///x.db", "http://h", ""):
        with pytest.raises(ValueError):
            notification_bus(bad)


# --- fan-out in one process ---------------------------------------------------------------


class Recording:
    """A bus that only records what it is asked to carry."""

    def __init__(self) -> None:
        self.published: list[Notice] = []
        self.events: list[str] = []

    def publish(self, notice: Notice) -> None:
        self.published.append(notice)

    async def start(self, deliver: Callable[[Notice], int]) -> None:
        self.events.append("start")

    async def stop(self) -> None:
        self.events.append("stop")


def test_a_raised_notice_is_told_here_and_published_once() -> None:
    bus = Recording()
    streams = Subscriptions(bus=bus)
    sent: list[dict[str, Any]] = []
    streams.open("l", {"toolsListChanged": True, "taskIds": ["t1"]}, sent.append)
    assert streams.list_changed("toolsListChanged") == 1
    assert streams.list_changed("promptsListChanged") == 0  # not asked for, still published
    assert streams.task_changed(record("t1")) == 1
    assert bus.published == [
        Notice("list", "toolsListChanged"),
        Notice("list", "promptsListChanged"),
        Notice("task", "t1", record("t1").detailed()),
    ]
    assert sent[1:] == [
        list_changed("tools", "l"),
        {
            "jsonrpc": "2.0",
            "method": "notifications/tasks",
            "params": {
                "_meta": {SUBSCRIPTION_ID: "l"},
                "taskId": "t1",
                "status": "completed",
                "createdAt": record("t1").detailed()["createdAt"],
                "lastUpdatedAt": record("t1").detailed()["lastUpdatedAt"],
                "ttlMs": 60_000,
                "pollIntervalMs": 500,
                "result": {"content": [{"type": "text", "text": "done"}], "isError": False},
            },
        },
    ]


def test_a_delivered_notice_is_filtered_per_stream_and_never_published_again() -> None:
    bus = Recording()
    streams = Subscriptions(bus=bus)
    heard: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
    streams.open("a", {"resourceSubscriptions": ["file:///project/"]}, heard["a"].append)
    streams.open("b", {"promptsListChanged": True, "taskIds": ["t2"]}, heard["b"].append)
    assert streams.deliver(Notice("resource", "file:///project/src/x.py")) == 1
    assert streams.deliver(Notice("resource", "file:///projectX")) == 0
    assert streams.deliver(Notice("list", "promptsListChanged")) == 1
    assert streams.deliver(Notice("list", "resourcesListChanged")) == 0
    assert streams.deliver(Notice("task", "t1", {"taskId": "t1"})) == 0
    assert streams.deliver(Notice("task", "t2", {"taskId": "t2", "status": "working"})) == 1
    assert bus.published == []
    assert heard["a"][1:] == [updated("file:///project/src/x.py", "a")]
    assert heard["b"][1:] == [
        list_changed("prompts", "b"),
        {
            "jsonrpc": "2.0",
            "method": "notifications/tasks",
            "params": {"_meta": {SUBSCRIPTION_ID: "b"}, "taskId": "t2", "status": "working"},
        },
    ]


@sync
async def test_the_default_bus_keeps_notifications_in_this_process() -> None:
    server = worker()
    sent = await listen(server, "l1")
    await server.startup()
    assert server.notify_list_changed("tools") == 1
    assert server.notify_resource_updated("file:///project/a") == 1
    await server.shutdown()
    assert sent[1:] == [
        list_changed("tools", "l1"),
        updated("file:///project/a", "l1"),
        ended("l1"),  # shutdown ends the stream gracefully
    ]


def ended(subscription: str) -> dict[str, Any]:
    """A listen stream's completion result, as the server ends it."""
    meta = {"io.modelcontextprotocol/subscriptionId": subscription}
    return {
        "jsonrpc": "2.0",
        "id": subscription,
        "result": {"resultType": "complete", "_meta": meta},
    }


# --- two workers on one Redis --------------------------------------------------------------


@pytest.fixture
def channel() -> str:
    """A channel of its own for each test: the session's Redis is shared."""
    return f"snodo-test:{secrets.token_hex(6)}"


def pair(url: str, channel: str) -> tuple[Server, Server]:
    """Two workers sharing one Redis channel."""
    return worker(RedisBus(url, channel=channel)), worker(RedisBus(url, channel=channel))


@sync
async def test_what_one_worker_raises_reaches_the_others_streams_once(
    redis_url: str, channel: str
) -> None:
    a, b = (
        worker(RedisBus(redis_url, channel=channel)),
        worker(RedisBus(redis_url, channel=channel)),
    )
    on_a, on_b = await listen(a, "on-a"), await listen(b, "on-b")
    await a.startup()
    await b.startup()
    try:
        assert b.notify_list_changed("tools") == 1  # b's own stream, told at once
        assert on_b[1:] == [list_changed("tools", "on-b")]
        assert b.notify_resource_updated("file:///project/b") == 1
        await until(lambda: len(on_a) == 3)
        assert on_a[1:] == [list_changed("tools", "on-a"), updated("file:///project/b", "on-a")]
        # a's notice reaches b after anything of b's own that Redis sent back to it.
        a.notify_list_changed("prompts")
        await until(lambda: len(on_b) == 4)
        assert on_b[1:] == [
            list_changed("tools", "on-b"),
            updated("file:///project/b", "on-b"),
            list_changed("prompts", "on-b"),
        ]
        assert on_a[3:] == [list_changed("prompts", "on-a")]
    finally:
        await a.shutdown()
        await b.shutdown()


@sync
async def test_task_status_crosses_to_the_streams_that_asked_for_that_task(
    redis_url: str, channel: str
) -> None:
    a, b = (
        worker(RedisBus(redis_url, channel=channel)),
        worker(RedisBus(redis_url, channel=channel)),
    )
    watching = await listen(a, "w", {"taskIds": ["t1"]})
    elsewhere = await listen(a, "e", {"taskIds": ["t9"]})
    marker = await listen(a, "m", {"toolsListChanged": True})
    await a.startup()
    await b.startup()
    try:
        assert b.subscriptions.task_changed(record("t1")) == 0  # no stream on b
        b.notify_list_changed("tools")  # once this is on a's side, so is the task
        await until(lambda: len(marker) == 2)
        assert watching[1:] == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/tasks",
                "params": {"_meta": {SUBSCRIPTION_ID: "w"}, **record("t1").detailed()},
            }
        ]
        assert elsewhere[1:] == []
    finally:
        await a.shutdown()
        await b.shutdown()


@sync
async def test_workers_on_other_channels_do_not_hear_each_other(
    redis_url: str, channel: str
) -> None:
    a = worker(RedisBus(redis_url, channel=channel))
    b = worker(RedisBus(redis_url, channel=channel + ":other"))
    c = worker(RedisBus(redis_url, channel=channel + ":other"))
    on_a, on_c = await listen(a, "a"), await listen(c, "c")
    for server in (a, b, c):
        await server.startup()
    try:
        b.notify_list_changed("tools")
        await until(lambda: len(on_c) == 2)
        assert on_a[1:] == []
    finally:
        for server in (a, b, c):
            await server.shutdown()


@sync
async def test_a_malformed_message_on_the_channel_is_logged_and_skipped(
    redis_url: str, channel: str, caplog: pytest.LogCaptureFixture
) -> None:
    bus = RedisBus(redis_url, channel=channel)
    a, b = worker(bus), worker(RedisBus(redis_url, channel=channel))
    on_a = await listen(a, "a")
    await a.startup()
    await b.startup()
    stranger = redis.asyncio.Redis.from_url(redis_url)
    try:
        with caplog.at_level(logging.WARNING, logger="snodo.notify"):
            await stranger.publish(channel, '{"kind":"list","key":"toolsListChanged"}')
            b.notify_list_changed("tools")
            await until(lambda: len(on_a) == 2)
        assert on_a[1:] == [list_changed("tools", "a")]
        assert any("malformed" in r.getMessage() for r in caplog.records)
        assert bus.subscribed
    finally:
        await stranger.aclose()
        await a.shutdown()
        await b.shutdown()


# --- Redis unreachable ---------------------------------------------------------------------


@sync
async def test_without_redis_requests_go_on_and_local_streams_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = RedisBus(f"redis://127.0.0.1:{free_port()}", channel="c", timeout=0.3)
    server = worker(bus)
    sent = await listen(server, "l")
    with caplog.at_level(logging.WARNING, logger="snodo.notify"):
        started = asyncio.get_running_loop().time()
        await server.startup()  # waits for the subscription at most ``timeout``
        assert asyncio.get_running_loop().time() - started < 2
        assert not bus.subscribed
        for _ in range(3):
            assert server.notify_list_changed("tools") == 1
        reply = await server.handle(request("tools/call", {"name": "t", "arguments": {}}, 7))
        assert reply.response is not None
        assert reply.response["result"]["content"] == [{"type": "text", "text": "x"}]
        await server.shutdown()
    assert sent[1:] == [list_changed("tools", "l")] * 3 + [ended("l")]
    messages = [r.getMessage() for r in caplog.records]
    assert sum("publishing failed" in m for m in messages) == 1  # once per outage
    assert any("not subscribed yet" in m for m in messages)


@sync
async def test_a_full_queue_drops_new_notices_and_says_so_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bus = RedisBus(f"redis://127.0.0.1:{free_port()}", channel="c", timeout=0.2)
    server = worker(bus)
    await server.startup()
    with caplog.at_level(logging.WARNING, logger="snodo.notify"):
        for _ in range(1500):
            server.notify_list_changed("tools")
    await server.shutdown()
    assert sum("dropping new ones" in r.getMessage() for r in caplog.records) == 1


class OwnRedis:
    """A redis-server of one test's own, on a free port, that the test stops and starts."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (CI: apt-get install redis-server)")
        self.port = free_port()
        self.command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        self.command += ["--dir", str(workdir), "--appendonly", "no", "--loglevel", "warning"]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not answers_ping(self.port):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@sync
async def test_after_an_outage_the_workers_hear_each_other_again(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"redis://127.0.0.1:{own_redis.port}"
    buses = RedisBus(url, timeout=0.5), RedisBus(url, timeout=0.5)
    a, b = worker(buses[0]), worker(buses[1])
    on_a, on_b = await listen(a, "a"), await listen(b, "b")
    with caplog.at_level(logging.INFO, "snodo.notify"):
        await a.startup()
        await b.startup()
        try:
            await asyncio.to_thread(own_redis.stop)
            await until(lambda: not buses[0].subscribed and not buses[1].subscribed)
            assert b.notify_list_changed("tools") == 1  # heard here, lost for a
            await asyncio.to_thread(own_redis.start)
            await until(lambda: buses[0].subscribed and buses[1].subscribed, 15)
            assert b.notify_list_changed("prompts") == 1
            await until(lambda: len(on_a) == 2)
            assert on_a[1:] == [list_changed("prompts", "a")]
            assert on_b[1:] == [list_changed("tools", "b"), list_changed("prompts", "b")]
        finally:
            await a.shutdown()
            await b.shutdown()
    messages = [r.getMessage() for r in caplog.records]
    assert sum("subscription lost" in m for m in messages) == 2  # once per bus
    assert sum("subscribed again" in m for m in messages) == 2


# --- lifecycle ------------------------------------------------------------------------------


@sync
async def test_the_asgi_lifespan_starts_and_stops_the_bus() -> None:
    bus = Recording()
    app = HttpApp(worker(bus))
    incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outgoing: list[str] = []

    async def send(message: Any) -> None:
        outgoing.append(message["type"])
        if message["type"] == "lifespan.startup.complete":
            assert bus.events == ["start"]  # started before the first request is taken
            await incoming.put({"type": "lifespan.shutdown"})

    await incoming.put({"type": "lifespan.startup"})
    await app({"type": "lifespan"}, incoming.get, send)
    assert outgoing == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert bus.events == ["start", "stop"]


@sync
async def test_stdio_runs_the_bus_while_it_serves() -> None:
    bus = Recording()
    server = worker(bus)
    order: list[str] = []
    output = io.BytesIO()

    async def serve() -> None:
        with open("/dev/null", "rb") as stdin:
            await serve_stdio(server, stdin, output)
        order.extend(bus.events)

    await serve()
    assert order == ["start", "stop"]


@sync
async def test_a_redis_bus_leaves_no_task_behind_and_can_start_again(
    redis_url: str, channel: str
) -> None:
    bus = RedisBus(redis_url, channel=channel)
    server = worker(bus)
    before = asyncio.all_tasks()
    for _ in range(2):
        await server.startup()
        await server.startup()  # a second start is nothing
        assert bus.running and bus.subscribed
        assert len(asyncio.all_tasks() - before) == 2  # a publisher and a subscriber
        await server.shutdown()
        await server.shutdown()
        assert not bus.running and not bus.subscribed
        assert asyncio.all_tasks() == before
