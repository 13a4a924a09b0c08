"""What a proxy costs on large results: passed on as bytes, against decoded and encoded.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/proxy_large.py [--blocks 200,20000] [--rounds 5] [--calls 2000]
                                          [--quick]

The backend is a snodo server (one uvicorn worker, httptools, uvloop) with one tool,
``rows(count)``, answering ``count`` text blocks (``row N of the report``): 200 blocks
are about 8 KB of JSON, 20,000 about 900 KB. In front of it, two ``snodo.gateway.proxy``
servers on ``Client.http``, each its own process: **passing**, as ``snodo proxy`` runs,
whose large result members go on as the bytes they came as
(``snodo.client.transports.passthrough``); and **decoding**, the same proxy with one
middleware that returns what it is given, which turns passing off, so each result is
decoded and encoded again. Sequential calls over one connection, the cases taking
turns; the figure is each process's CPU per call (from /proc) over ``--calls`` calls of
200 blocks (fewer of larger answers, as many blocks in all, at least 50 calls) after a
few untimed ones, median over rounds, every answer checked for its last block. No
timing assertions.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from flows import META, PROTOCOL, snodo_build

CASES = ("direct", "passing", "decoding")


def backend_app() -> Any:
    from snodo import Server  # noqa: PLC0415 - the server's process only
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    server = Server("bench-rows", "1.0.0")

    @server.tool()
    async def rows(count: int) -> list[dict[str, str]]:
        """``count`` text blocks."""
        return [{"type": "text", "text": f"row {n} of the report"} for n in range(count)]

    return HttpApp(server)


def proxy_app(backend_port: int, decoding: bool) -> Any:
    from snodo.client import Client  # noqa: PLC0415 - the proxy's process only
    from snodo.gateway import proxy  # noqa: PLC0415
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    url = f"http://127.0.0.1:{backend_port}/mcp"
    server = proxy(lambda **options: Client.http(url, **options), name="bench-proxy")
    if decoding:

        @server.middleware
        async def same(ctx: Any, call_next: Any) -> Any:
            return await call_next(ctx)

    return HttpApp(server)


async def _calls(port: int, blocks: int, calls: int, pids: list[int]) -> list[float]:
    connection = await harness.Connection(port).open()
    headers = harness.header_lines(
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "rows",
        }
    )
    params = {"_meta": META, "name": "rows", "arguments": {"count": blocks}}
    body = harness.encode({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    last = f"row {blocks - 1} of the report"

    async def one() -> None:
        answer = await connection.exchange(b"POST", headers, body)
        result = answer.messages[-1]["result"] if answer.messages else {}
        content = result.get("content") or [{}]
        if answer.status != 200 or content[-1].get("text") != last:
            raise harness.HttpError(f"wrong answer: {answer.status} {str(result)[:200]}")

    try:
        for _ in range(5):
            await one()
        before = [harness.proc_cpu_seconds(pid) for pid in pids]
        for _ in range(calls):
            await one()
        return [
            (harness.proc_cpu_seconds(p) - b) / calls * 1e6
            for p, b in zip(pids, before, strict=True)
        ]
    finally:
        connection.close()


def orchestrate(args: argparse.Namespace) -> None:
    sizes = [int(size) for size in args.blocks.split(",") if size]
    print(
        f"proxy_large: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, one uvicorn worker each (httptools, uvloop); snodo "
        f"{snodo_build()}"
    )
    print(
        f"{args.rounds} rounds x {args.calls} sequential calls of 200 blocks per case (as many "
        "blocks in fewer calls of the larger answers); medians over rounds"
    )
    with contextlib.ExitStack() as logs:
        children: list[harness.Child] = []
        try:
            log = logs.enter_context(tempfile.TemporaryFile("w+b"))
            backend = harness.start(__file__, "backend", log)
            children.append(backend)
            fronts = {}
            for case in CASES[1:]:
                log = logs.enter_context(tempfile.TemporaryFile("w+b"))
                extra = ("--backend-port", str(backend.port))
                fronts[case] = harness.start(__file__, case, log, extra)
                children.append(fronts[case])
            runs: dict[tuple[str, int], list[list[float]]] = {}
            for round_index in range(args.rounds):
                for blocks in sizes:
                    turns = [("direct", backend.port, [backend.pid])]
                    turns += [(c, f.port, [f.pid, backend.pid]) for c, f in fronts.items()]
                    shift = round_index % len(turns)
                    for case, port, pids in turns[shift:] + turns[:shift]:
                        calls = max(50, args.calls * 200 // blocks)
                        figures = harness.run_async(
                            lambda p=port, b=blocks, n=calls, k=pids: _calls(p, b, n, k)
                        )
                        runs.setdefault((case, blocks), []).append(figures)
        finally:
            harness.stop([child.process for child in children])
    _report(runs, sizes)


def _report(runs: dict[tuple[str, int], list[list[float]]], sizes: list[int]) -> None:
    print()
    print(
        "| blocks | backend alone | passing: proxy + backend | decoding: proxy + backend "
        "| passing proxy, x decoding |"
    )
    print("|---|---|---|---|---|")
    for blocks in sizes:
        direct = statistics.median(r[0] for r in runs[("direct", blocks)])
        cells = []
        fronts = {}
        for case in CASES[1:]:
            rows = runs[(case, blocks)]
            fronts[case] = statistics.median(r[0] for r in rows)
            behind = statistics.median(r[1] for r in rows)
            cells.append(f"{fronts[case]:,.0f} + {behind:,.0f}")
        ratio = harness.ratio(fronts["passing"], fronts["decoding"])
        print(f"| {blocks:,} | {direct:,.0f} | {cells[0]} | {cells[1]} | {ratio} |")
    print("\nserver CPU µs per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", default="200,20000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke test)")
    parser.add_argument("--serve", choices=(*CASES[1:], "backend"), help=argparse.SUPPRESS)
    parser.add_argument("--backend-port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.calls, args.blocks = 1, 20, "200,2000"
    if args.serve == "backend":
        harness.serve_uvicorn(backend_app())
    elif args.serve:
        harness.serve_uvicorn(proxy_app(args.backend_port, args.serve == "decoding"))
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
