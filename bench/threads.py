"""What the thread a sync handler runs in costs: the same echo tool, ``inline=True`` on the
event loop against the default, a thread of the server's own pool, in process.

Run from the repository root:

    .venv/bin/python bench/threads.py [--rounds 7] [--calls 2000] [--loop uvloop] [--quick]

Each case is ``Server.handle`` on a decoded ``tools/call`` (the core, no HTTP), on the
loop the HTTP servers run (uvloop when installed; ``--loop asyncio`` for the standard
one), and beside them for reference an ``async def`` tool, and one that hops through
asyncio's ``run_in_executor`` on a ``ThreadPoolExecutor`` of the same size (how sync
handlers ran before the pool had its own queue). Figures are CPU microseconds per call
(``time.process_time``: the loop's thread and the pool's, as the process spends them)
and wall microseconds, median over interleaved rounds, and each case's multiple of the
inline one's; the hop is a case's CPU less the inline one's. For scale, the floor: two
bare threads handing a value back and forth on a ``queue.SimpleQueue`` (the two thread
switches any hop makes, without an event loop), CPU per round trip; and the same trip
between the event loop and one bare thread, by the hop's own means (a future on a
``SimpleQueue``, set through ``call_soon_threadsafe``, which wakes the loop's poll), the
floor of any hop a coroutine awaits. No timing assertions.
"""

import argparse
import asyncio
import json
import platform
import queue
import statistics
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from typing import Any

from snodo import Server

KINDS = ("inline", "thread", "executor", "async")


def server(pool: ThreadPoolExecutor) -> Server:
    built = Server("bench-threads", "1.0.0")

    @built.tool(name="inline", inline=True)
    def inline(text: str) -> str:
        return text

    @built.tool(name="thread")
    def threaded(text: str) -> str:
        return text

    @built.tool(name="async")
    async def asynchronous(text: str) -> str:
        return text

    def echo(text: str) -> str:
        return text

    @built.tool(name="executor")
    async def executor(text: str) -> str:
        return await asyncio.get_running_loop().run_in_executor(pool, echo, text)

    return built


def message(kind: str, number: int) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": kind, "arguments": {"text": "hi"}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}


async def measure(target: Server, kind: str, calls: int) -> tuple[float, float]:
    """CPU and wall microseconds per call of ``kind``."""
    cpu, wall = time.process_time(), time.perf_counter()
    for number in range(calls):
        reply = await target.handle(message(kind, number))
        assert reply.response is not None and "result" in reply.response
    return (
        (time.process_time() - cpu) / calls * 1e6,
        (time.perf_counter() - wall) / calls * 1e6,
    )


def ping_pong(trips: int) -> float:
    """CPU microseconds per round trip of a value between two bare threads."""
    there: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    back: queue.SimpleQueue[int] = queue.SimpleQueue()

    def echo() -> None:
        while (item := there.get()) is not None:
            back.put(item)

    thread = threading.Thread(target=echo)
    thread.start()
    cpu = time.process_time()
    for trip in range(trips):
        there.put(trip)
        back.get()
    spent = (time.process_time() - cpu) / trips * 1e6
    there.put(None)
    thread.join()
    return spent


async def loop_ping_pong(trips: int) -> float:
    """CPU microseconds per round trip between this event loop and one bare thread: the
    loop puts a future on a SimpleQueue and awaits it, the thread sets it through
    ``call_soon_threadsafe`` (the hop's own mechanism, without a server or a handler)."""
    loop = asyncio.get_running_loop()
    there: queue.SimpleQueue[asyncio.Future[int] | None] = queue.SimpleQueue()

    def echo() -> None:
        while (future := there.get()) is not None:
            loop.call_soon_threadsafe(future.set_result, 1)

    thread = threading.Thread(target=echo)
    thread.start()
    cpu = time.process_time()
    for _ in range(trips):
        future: asyncio.Future[int] = loop.create_future()
        there.put(future)
        await future
    spent = (time.process_time() - cpu) / trips * 1e6
    there.put(None)
    thread.join()
    return spent


async def main(rounds: int, calls: int, loop_name: str, out: str | None = None) -> None:
    executor = ThreadPoolExecutor(Server("limit", "1").threads.limit)
    target = server(executor)
    for kind in KINDS:  # warm: imports, the pool's first thread
        await measure(target, kind, 200)
    cpu: dict[str, list[float]] = {kind: [] for kind in KINDS}
    wall: dict[str, list[float]] = {kind: [] for kind in KINDS}
    floor: list[float] = []
    loop_floor: list[float] = []
    for _ in range(rounds):
        floor.append(ping_pong(calls))
        loop_floor.append(await loop_ping_pong(calls))
        for kind in KINDS:
            spent, elapsed = await measure(target, kind, calls)
            cpu[kind].append(spent)
            wall[kind].append(elapsed)
    target.threads.close()
    executor.shutdown()
    print(
        f"threads: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{loop_name}"
    )
    print(f"{rounds} rounds of {calls} tools/call each, Server.handle in process\n")
    print("| tool | CPU µs per call | x inline | wall µs per call | x inline |")
    print("|---|---|---|---|---|")
    base_cpu, base_wall = statistics.median(cpu["inline"]), statistics.median(wall["inline"])
    for kind in KINDS:
        spent, elapsed = statistics.median(cpu[kind]), statistics.median(wall[kind])
        print(
            f"| {kind} | {spent:.1f} | {spent / base_cpu:.2f}x "
            f"| {elapsed:.1f} | {elapsed / base_wall:.2f}x |"
        )
    hop = statistics.median(cpu["thread"]) - base_cpu
    before = statistics.median(cpu["executor"]) - base_cpu
    print(
        f"\nthread hop (CPU µs per call over the inline tool's): {hop:.1f} in the server's "
        f"pool, {before:.1f} through run_in_executor ({hop / before:.2f}x)"
    )
    print(
        f"floor: two bare threads passing a value back and forth on a SimpleQueue, "
        f"{statistics.median(floor):.1f} CPU µs per round trip; this event loop and one bare "
        f"thread (a future on a SimpleQueue, set through call_soon_threadsafe), "
        f"{statistics.median(loop_floor):.1f}"
    )
    if out:
        figures = {
            "hop": hop,
            "executor hop": before,
            "floor": statistics.median(floor),
            "loop floor": statistics.median(loop_floor),
        }
        with open(out, "w") as file:
            json.dump(figures, file)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--quick", action="store_true", help="one short round (tests)")
    parser.add_argument("--json", help=argparse.SUPPRESS)  # bench/speed.py's figures
    options = parser.parse_args()
    if options.quick:
        options.rounds, options.calls = 1, 50
    runner: Callable[[Coroutine[Any, Any, None]], None] = asyncio.run
    loop_name = "asyncio"
    if options.loop == "uvloop":
        try:
            import uvloop

            runner, loop_name = uvloop.run, f"uvloop {version('uvloop')}"
        except ImportError:
            pass
    runner(main(options.rounds, options.calls, loop_name, options.json))
