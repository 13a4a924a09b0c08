"""What the thread a sync handler runs in costs: the same echo tool, ``inline=True`` on the
event loop against the default, a thread of the server's pool, in process.

Run from the repository root:

    .venv/bin/python bench/threads.py [--rounds 7] [--calls 2000] [--quick]

Each case is ``Server.handle`` on a decoded ``tools/call`` (the core, no HTTP), and an
``async def`` tool beside them for reference. Figures are CPU microseconds per call
(``time.process_time``: the main thread's and the pool's, as the process spends them)
and wall microseconds, median over interleaved rounds, and each case's multiple of the
inline one's. No timing assertions.
"""

import argparse
import asyncio
import platform
import statistics
import time
from typing import Any

from snodo import Server

KINDS = ("inline", "thread", "async")


def server() -> Server:
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


async def main(rounds: int, calls: int) -> None:
    target = server()
    for kind in KINDS:  # warm: imports, the pool's first thread
        await measure(target, kind, 200)
    cpu: dict[str, list[float]] = {kind: [] for kind in KINDS}
    wall: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(rounds):
        for kind in KINDS:
            spent, elapsed = await measure(target, kind, calls)
            cpu[kind].append(spent)
            wall[kind].append(elapsed)
    target.threads.close()
    print(f"threads: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}")
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


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="one short round (tests)")
    options = parser.parse_args()
    if options.quick:
        options.rounds, options.calls = 1, 50
    asyncio.run(main(options.rounds, options.calls))
