"""Sync handlers run off the event loop: a blocking one stalls nothing else, emits in
order from its thread, sees the request's context variables, stays within the thread
limit, and a cancelled request stops waiting for it at once."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import subprocess
import sys
import threading
import time
import traceback
import unittest.mock
from pathlib import Path
from typing import Annotated, Any

import httpx
import pytest

from snodo import Context, Depends, Limits, Server
from snodo.server.invoke import invoker
from snodo.server.threads import Threads
from tests.support.processes import serving, snodo_run
from tests.support.wire import VERSION, call, request

TARGET = "tests/server/threads_server.py:server"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": VERSION,
}


def _post(client: httpx.Client, url: str, name: str, arguments: dict[str, Any]) -> Any:
    message = request("tools/call", {"name": name, "arguments": arguments})
    headers = {**HEADERS, "mcp-method": "tools/call", "mcp-name": name}
    return client.post(url, json=message, headers=headers, timeout=30).json()


def test_a_blocking_sync_tool_stalls_no_other_request_of_its_worker() -> None:
    """Through a real ``snodo run`` process over HTTP: while one call sleeps in its
    thread, another call on the same worker is answered before the sleep ends (a loop
    the sleep blocked would answer it only after), whatever the machine's load."""
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port))) as server:
        url = f"{server.base}/mcp"
        with httpx.Client() as warm:
            _post(warm, url, "where", {})  # connections and imports made before timing

        def sleeper() -> None:
            with httpx.Client() as client:
                results.append(_post(client, url, "slow", {"seconds": 3}))

        results: list[Any] = []
        thread = threading.Thread(target=sleeper)
        thread.start()
        time.sleep(0.3)  # the sleep has begun
        with httpx.Client() as client:
            answer = _post(client, url, "where", {})
            slept_first = bool(results)
        thread.join()
    assert answer["result"]["content"][0]["text"].startswith("snodo-handler")
    assert not slept_first
    assert results[0]["result"]["content"] == [{"type": "text", "text": "slept"}]


def test_inline_handlers_run_on_the_loop_and_the_rest_in_threads() -> None:
    server = Server("t", "1")

    @server.tool
    def threaded() -> str:
        return threading.current_thread().name

    @server.tool(inline=True)
    def inline() -> str:
        return threading.current_thread().name

    @server.resource("t://where")
    def where() -> str:
        return threading.current_thread().name

    @server.prompt
    def ask() -> str:
        return threading.current_thread().name

    def text(message: dict[str, Any]) -> str:
        result = call(server, message).response
        assert result is not None
        found = result["result"]
        if "contents" in found:
            return str(found["contents"][0]["text"])
        if "messages" in found:
            return str(found["messages"][0]["content"]["text"])
        return str(found["content"][0]["text"])

    loop = threading.current_thread().name
    assert text(request("tools/call", {"name": "threaded"})).startswith("snodo-handler")
    assert text(request("tools/call", {"name": "inline"})) == loop
    assert text(request("resources/read", {"uri": "t://where"})).startswith("snodo-handler")
    assert text(request("prompts/get", {"name": "ask"})).startswith("snodo-handler")


REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def test_a_threaded_handler_emits_in_order_before_its_result_and_sees_context_vars() -> None:
    server = Server("t", "1")

    @server.tool
    def chatty(ctx: Context) -> str:
        for step in (1, 2, 3):
            ctx.report_progress(step, 3)
            ctx.log("info", f"step {step}")
        return REQUEST_ID.get()

    async def scenario() -> tuple[list[dict[str, Any]], Any]:
        REQUEST_ID.set("r-7")
        emitted: list[dict[str, Any]] = []
        meta = {"progressToken": "p", "io.modelcontextprotocol/logLevel": "info"}
        message = request("tools/call", {"name": "chatty"}, **meta)
        reply = await server.handle(message, emit=emitted.append)
        return emitted, reply.response

    emitted, response = asyncio.run(scenario())
    assert [m["method"] for m in emitted] == [
        "notifications/progress",
        "notifications/message",
    ] * 3
    assert [m["params"].get("progress") for m in emitted[::2]] == [1, 2, 3]
    assert response["result"]["content"] == [{"type": "text", "text": "r-7"}]


def test_the_thread_limit_bounds_sync_handlers_running_at_once() -> None:
    server = Server("t", "1", limits=Limits(threads=2))
    running: list[int] = []
    most = [0]
    lock = threading.Lock()

    @server.tool
    def busy() -> str:
        with lock:
            running.append(1)
            most[0] = max(most[0], len(running))
        time.sleep(0.1)
        with lock:
            running.pop()
        return "done"

    async def scenario() -> list[Any]:
        calls = [server.handle(request("tools/call", {"name": "busy"}, id=i)) for i in range(6)]
        return await asyncio.gather(*calls)

    began = time.monotonic()
    replies = asyncio.run(scenario())
    assert all(r.response["result"]["content"][0]["text"] == "done" for r in replies)
    assert most[0] == 2
    assert time.monotonic() - began >= 0.3  # six calls, two at a time, 0.1 s each


def test_a_cancelled_request_stops_waiting_for_its_thread_at_once() -> None:
    server = Server("t", "1")
    release = threading.Event()
    finished = threading.Event()

    @server.tool
    def stuck() -> str:
        release.wait(5)
        finished.set()
        return "late"

    async def scenario() -> float:
        pending = asyncio.ensure_future(server.handle(request("tools/call", {"name": "stuck"})))
        await asyncio.sleep(0.1)
        began = time.monotonic()
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
        return time.monotonic() - began

    assert asyncio.run(scenario()) < 0.05
    assert not finished.is_set()  # the thread is still in the handler, as documented
    release.set()
    assert finished.wait(5)


def test_only_a_call_with_nothing_around_it_is_called_directly() -> None:
    """``tools/call`` calls a ``direct`` function itself, skipping ``Invoker.start``: an
    inline sync function, or an async one, without a timeout or dependencies. Anything
    needing a thread, a timeout or a provider goes through ``start``."""

    def plain(text: str) -> str:
        return text

    async def awaited(text: str) -> str:
        return text

    def given(value: Annotated[str, Depends(_provided)]) -> str:
        return value

    pool = Threads()
    assert invoker(plain, inline=True, threads=pool).direct
    assert invoker(awaited, threads=pool).direct
    assert invoker(plain).direct  # no threads given: it runs inline
    assert not invoker(plain, threads=pool).direct  # a sync function's thread
    assert not invoker(awaited, timeout=1.0).direct
    assert not invoker(given, inline=True).direct


def _provided() -> str:
    return "provided"


def test_a_hop_is_a_queue_and_a_loop_callback_not_an_executor_future() -> None:
    """The cheaper hop: no ``concurrent.futures`` future (with its condition and the
    chaining to an asyncio future) is made per call; the value comes back as is, and
    sequential calls share one thread."""
    made: list[object] = []
    original = concurrent.futures.Future.__init__

    def counting(self: concurrent.futures.Future[Any]) -> None:
        made.append(self)
        original(self)

    pool = Threads(4)
    names: list[str] = []

    def where(step: int) -> tuple[int, str]:
        names.append(threading.current_thread().name)
        return step, threading.current_thread().name

    async def scenario() -> list[tuple[int, str]]:
        return [await pool.run(where, {"step": step}) for step in range(20)]

    with unittest.mock.patch.object(concurrent.futures.Future, "__init__", counting):
        values = asyncio.run(scenario())
    pool.close()
    assert [step for step, _ in values] == list(range(20))
    assert made == []
    assert len(set(names)) == 1 and names[0].startswith("snodo-handler")


def test_what_a_threaded_function_raises_is_raised_on_the_loop_with_its_frames() -> None:
    pool = Threads()

    def failing(reason: str) -> None:
        raise LookupError(reason)

    def interrupting() -> None:
        raise KeyboardInterrupt

    async def scenario() -> None:
        with pytest.raises(LookupError, match="no such row") as caught:
            await pool.run(failing, {"reason": "no such row"})
        frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
        assert "failing" in frames
        with pytest.raises(KeyboardInterrupt):  # not lost in the thread, nor hanging
            await pool.run(interrupting, {})
        assert await pool.run(failing.__name__.upper, {}) == "FAILING"  # still serving

    asyncio.run(scenario())
    pool.close()


def test_close_drops_calls_not_begun_and_a_later_call_starts_afresh() -> None:
    pool = Threads(1)
    release = threading.Event()
    ran: list[str] = []

    def blocking(name: str) -> str:
        ran.append(name)
        release.wait(5)
        return name

    async def scenario() -> tuple[Any, Any]:
        first = asyncio.ensure_future(pool.run(blocking, {"name": "first"}))
        second = asyncio.ensure_future(pool.run(blocking, {"name": "second"}))
        while not ran:  # the one thread holds the first; the second waits its turn
            await asyncio.sleep(0.01)
        pool.close()
        release.set()
        outcomes = await asyncio.gather(first, second, return_exceptions=True)
        return outcomes, await pool.run(blocking, {"name": "third"})

    (first, second), third = asyncio.run(scenario())
    pool.close()
    assert first == "first"
    assert isinstance(second, asyncio.CancelledError)
    assert third == "third"
    assert ran == ["first", "third"]


EXITING = """
import asyncio, sys, threading
from snodo.server.threads import Threads

pool = Threads()
began = threading.Event()

def slow(path: str) -> None:
    began.set()
    threading.Event().wait(0.5)
    with open(path, "w") as out:
        out.write("finished")

async def main() -> None:
    call = asyncio.ensure_future(pool.run(slow, {"path": sys.argv[1]}))
    await asyncio.get_running_loop().run_in_executor(None, began.wait)
    call.cancel()  # the request went away; its thread runs on

asyncio.run(main())
"""


def test_the_interpreters_exit_waits_for_a_running_call_not_for_idle_threads(
    tmp_path: Path,
) -> None:
    """A process that ends while a sync handler runs lets it finish (as a worker's
    shutdown does), and one whose threads are all idle ends at once."""
    marker = tmp_path / "marker"
    done = subprocess.run(
        [sys.executable, "-c", EXITING, str(marker)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "finished"
    idle = "import asyncio\nfrom snodo.server.threads import Threads\npool = Threads()\n"
    idle += "print(asyncio.run(pool.run(str, {})) == '')\n"
    done = subprocess.run(
        [sys.executable, "-c", idle], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
