"""Latency and throughput under load over loopback HTTP: snodo against the official SDK.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/load_curve.py [--flows echo,mrtr] [--concurrency 1,16,64,256]
                                         [--workers 1,2] [--seconds 3] [--plot PATH]
                                         [--quick]

The apps and flows are ``http_flow.py``'s (``bench/flows.py``): **echo**, a one-round
``tools/call``, and **mrtr**, the two-round elicitation flow (round one
``input_required`` with a signed ``requestState``, round two the retry answered
``complete``). Each server is served as ``http_flow.py`` serves it (httptools, uvloop;
snodo with uvicorn's proxy-headers middleware off as ``snodo run`` does, the official
SDK with uvicorn's defaults), here by import string (``flows:snodo_app``,
``flows:official_app`` with ``factory=True``) so that ``--workers 2`` can run uvicorn's
own supervisor: spawned workers sharing the listening socket, each building its app.
Every server passes ``http_flow.py``'s validation first (both flows' answers, a tampered
or replayed state refused, mismatched headers refused).

The load generator is a separate process, ``http_flow.py``'s: raw asyncio ``Protocol``
connections on uvloop, pre-built request bytes, one flow at a time per connection, here
also timing every request (write to the last byte of the answer). For each worker count,
flow and number of connections, both servers are measured one after the other, the
first alternating from point to point, so that drift on a shared machine hits both:
``--seconds`` of load after untimed warm-up flows. Reported per point: flows and requests
per second, p50 and p99 latency per request, the server's CPU per request (utime+stime
of the supervisor and every worker, from /proc), the load generator's CPU as a share of
one core (near 100%, the client rather than the server set the pace), and flows that
went wrong (a status other than 200, a wrong text, a connection lost). A Markdown table
is printed and one PNG (matplotlib, Agg) is written to ``--plot``. No timing assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
import http_flow
import uvicorn
from flows import FLOWS, USER, call_body, encode, expected_text, snodo_build, state_of

SERVERS = ("snodo", "official")
FACTORIES = {"snodo": "flows:snodo_app", "official": "flows:official_app"}
DEFAULT_PLOT = Path(__file__).resolve().parent / "load_curve.png"
COLOURS = {"snodo": "#1f77b4", "official": "#d62728"}


def serve(kind: str, workers: int) -> None:
    """Serve one app (built in each worker by its factory) on a free loopback port."""
    harness.serve_uvicorn(
        FACTORIES[kind], factory=True, workers=workers, **http_flow.uvicorn_extra(kind)
    )


# -- the load generator (its own process) -------------------------------------------------


@dataclass
class _Tally:
    deadline: float
    budget: int = 1 << 62
    errors: int = 0
    latencies: list[float] = field(default_factory=list)


async def _flows(port: int, flow: str, conn: http_flow._Connection, tally: _Tally) -> int:
    """Run flows until the budget or the deadline, timing each request; the flows run."""
    first = http_flow.raw_request(port, flow, encode(call_body(1, flow)))
    prefix, suffix = encode(call_body(2, flow, USER, "dark", "@STATE@")).split(b"@STATE@")
    head = http_flow.raw_request(port, flow, b"").rsplit(b"Content-Length:", 1)[0]
    expected = expected_text(flow).encode()
    two_rounds = flow == "mrtr"
    clock = time.perf_counter
    latencies = tally.latencies
    done = 0
    while tally.budget > 0 and clock() < tally.deadline:
        tally.budget -= 1
        done += 1
        try:
            sent = clock()
            status, body = await conn.request(first)
            latencies.append(clock() - sent)
            ok = status == 200
            if two_rounds:
                state = state_of(body)
                second = prefix + state + suffix
                sent = clock()
                status, body = await conn.request(
                    head + b"Content-Length: %d\r\n\r\n" % len(second) + second
                )
                latencies.append(clock() - sent)
                ok = ok and status == 200 and bool(state)
        except ConnectionError:
            tally.errors += 1  # this connection is gone: it runs no more flows
            break
        if not ok or expected not in body:
            tally.errors += 1
    return done


def _percentile(ordered: list[float], share: float) -> float:
    """The ``share`` quantile of sorted values (nearest rank), NaN for none."""
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


async def _load(args: argparse.Namespace) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    conns: list[http_flow._Connection] = []
    for _ in range(args.concurrency):
        _, protocol = await loop.create_connection(http_flow._Connection, "127.0.0.1", args.port)
        conns.append(protocol)
    warm = _Tally(deadline=time.perf_counter() + 60, budget=max(args.warmup, args.concurrency))
    await asyncio.gather(*(_flows(args.port, args.flow, conn, warm) for conn in conns))
    pids = [int(pid) for pid in str(args.pids).split(",")]
    tally = _Tally(deadline=0.0)
    before = harness.tree_cpu_seconds(pids)
    client_before = time.process_time()
    started = time.perf_counter()
    tally.deadline = started + args.seconds
    counts = await asyncio.gather(*(_flows(args.port, args.flow, conn, tally) for conn in conns))
    elapsed = time.perf_counter() - started
    server_cpu = harness.tree_cpu_seconds(pids) - before
    client_cpu = time.process_time() - client_before
    for conn in conns:
        if conn.transport is not None:
            conn.transport.close()
    flows = sum(counts)
    ordered = sorted(tally.latencies)
    return {
        "flows": flows,
        "requests": len(ordered),
        "elapsed": elapsed,
        "p50": _percentile(ordered, 0.50),
        "p99": _percentile(ordered, 0.99),
        "server_cpu": server_cpu,
        "client_cpu": client_cpu,
        "errors": tally.errors + warm.errors,
    }


def load_main(args: argparse.Namespace) -> None:
    result = harness.run_async(lambda: _load(args))
    with open(args.out, "w") as out:
        json.dump(result, out)


# -- orchestration ------------------------------------------------------------------------


@dataclass
class Point:
    """One server at one flow, worker count and number of connections."""

    server: str
    flow: str
    workers: int
    concurrency: int
    flows: int
    requests: int
    elapsed: float
    p50: float
    p99: float
    server_cpu: float
    client_cpu: float
    errors: int

    @property
    def flows_per_second(self) -> float:
        return self.flows / self.elapsed if self.elapsed else 0.0

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.elapsed if self.elapsed else 0.0

    @property
    def client_share(self) -> float:
        """The load generator's CPU over the point, in % of one core (100: it was the limit)."""
        return self.client_cpu / self.elapsed * 100 if self.elapsed else float("nan")

    @property
    def cpu_per_request(self) -> float:
        """Server CPU µs per request, summed over the supervisor and its workers."""
        return self.server_cpu / self.requests * 1e6 if self.requests else float("nan")


def _measure(
    server: harness.Child, pids: list[int], flow: str, concurrency: int, args: argparse.Namespace
) -> dict[str, Any]:
    options = [
        f"--flow={flow}",
        f"--port={server.port}",
        f"--pids={','.join(map(str, pids))}",
        f"--load-concurrency={concurrency}",
        f"--seconds={args.seconds}",
        f"--warmup={args.warmup}",
    ]
    return harness.load(__file__, server, options, args.seconds + 180)


def _start(kind: str, workers: int, log: Any) -> tuple[harness.Child, list[int]]:
    """A server and the processes whose CPU it spends (the supervisor, every worker)."""
    server = harness.start(__file__, kind, log, ("--serve-workers", str(workers)))
    pids = [server.pid, *harness.descendants(server.pid)]
    if len(pids) < workers + (workers > 1):
        raise RuntimeError(f"{kind}: {workers} workers wanted, processes {pids}")
    try:
        checks = http_flow.validate(kind, server.port)
    except (http_flow.WrongAnswerError, OSError, ValueError) as exc:
        raise RuntimeError(f"{kind} failed validation: {exc}\n{server.log_text()}") from exc
    print(
        f"validated {kind:8} ({workers} worker{'s' if workers > 1 else ''}) on "
        f"127.0.0.1:{server.port}: {checks} checks passed",
        flush=True,
    )
    return server, pids


def sweep(args: argparse.Namespace) -> list[Point]:
    points: list[Point] = []
    turn = 0
    for workers in args.workers:
        with contextlib.ExitStack() as logs:
            servers: list[tuple[harness.Child, list[int]]] = []
            try:
                for kind in SERVERS:
                    log = logs.enter_context(tempfile.TemporaryFile("w+b"))
                    servers.append(_start(kind, workers, log))
                for flow in args.flows:
                    for concurrency in args.concurrency:
                        order = servers if turn % 2 == 0 else servers[::-1]
                        turn += 1
                        for server, pids in order:
                            run = _measure(server, pids, flow, concurrency, args)
                            point = Point(
                                server.kind, flow, workers, concurrency, **_point_fields(run)
                            )
                            points.append(point)
                            print(
                                f"  {flow} {workers}w {concurrency:>4} conn {server.kind:8} "
                                f"{point.flows_per_second:8.0f} flows/s  p50 "
                                f"{point.p50 * 1e3:7.2f} ms  p99 {point.p99 * 1e3:7.2f} ms  "
                                f"errors {point.errors}",
                                flush=True,
                            )
            finally:
                harness.stop([server.process for server, _ in servers])
    return points


def _point_fields(run: dict[str, Any]) -> dict[str, Any]:
    return {name: run[name] for name in Point.__dataclass_fields__ if name in run}


def table(points: list[Point]) -> str:
    lines = [
        "| flow | server | workers | connections | flows/s | requests/s | p50 ms | p99 ms "
        "| server CPU µs/request | client CPU % | requests | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    ordered = sorted(
        points,
        key=lambda p: (p.flow, p.workers, p.concurrency, SERVERS.index(p.server)),
    )
    for p in ordered:
        lines.append(
            f"| {p.flow} | {p.server} | {p.workers} | {p.concurrency} | "
            f"{p.flows_per_second:.0f} | {p.requests_per_second:.0f} | {p.p50 * 1e3:.2f} | "
            f"{p.p99 * 1e3:.2f} | {p.cpu_per_request:.0f} | {p.client_share:.0f} | "
            f"{p.requests} | {p.errors} |"
        )
    return "\n".join(lines)


def plot(points: list[Point], path: Path, title: str) -> None:
    """One PNG: a row per flow; throughput, p50 and p99 latency against connections."""
    import matplotlib  # noqa: PLC0415 - only the orchestrator draws

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import FixedLocator, NullLocator  # noqa: PLC0415

    flows = list(dict.fromkeys(p.flow for p in points))
    panels: tuple[tuple[str, str, Callable[[Point], float], str], ...] = (
        ("flows/s", "throughput (flows/s)", lambda p: p.flows_per_second, "linear"),
        ("p50", "p50 latency per request (ms)", lambda p: p.p50 * 1e3, "log"),
        ("p99", "p99 latency per request (ms)", lambda p: p.p99 * 1e3, "log"),
    )
    figure, axes = plt.subplots(
        len(flows), len(panels), figsize=(12, 3.6 * len(flows) + 0.9), squeeze=False, dpi=100
    )
    for row, flow in enumerate(flows):
        mine = [p for p in points if p.flow == flow]
        connections = sorted({p.concurrency for p in mine})
        for column, (name, label, value, scale) in enumerate(panels):
            ax = axes[row][column]
            for server in SERVERS:
                for workers in sorted({p.workers for p in mine}):
                    line = sorted(
                        (p for p in mine if p.server == server and p.workers == workers),
                        key=lambda p: p.concurrency,
                    )
                    if not line:
                        continue
                    ax.plot(
                        [p.concurrency for p in line],
                        [value(p) for p in line],
                        color=COLOURS[server],
                        linestyle="-" if workers == 1 else "--",
                        marker="o" if workers == 1 else "s",
                        markersize=4,
                        label=f"{server}, {workers} worker{'s' if workers > 1 else ''}",
                    )
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(connections))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticklabels([str(c) for c in connections])
            ax.set_yscale(scale)
            if scale == "linear":
                ax.set_ylim(bottom=0)
            ax.set_xlabel("connections (concurrent flows)")
            ax.set_ylabel(label)
            ax.set_title(f"{flow}: {name}", fontsize=11)
            ax.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=4, frameon=False, fontsize=10)
    figure.suptitle(title, fontsize=12)
    figure.tight_layout(rect=(0, 0.06 if len(flows) == 1 else 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)


def orchestrate(args: argparse.Namespace) -> None:
    started = time.strftime("%Y-%m-%d %H:%M")
    print(
        f"load_curve: {started}, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"uvicorn {uvicorn.__version__} --http httptools --loop uvloop; snodo {snodo_build()}",
        flush=True,
    )
    print(
        f"flows {','.join(args.flows)}; connections {','.join(map(str, args.concurrency))}; "
        f"workers {','.join(map(str, args.workers))}; {args.seconds:g} s per point after "
        f"{args.warmup} warm-up flows (or one per connection); servers taking turns",
        flush=True,
    )
    points = sweep(args)
    print()
    print(table(points))
    title = (
        f"snodo vs official MCP SDK over loopback HTTP ({started}, {os.cpu_count()} CPUs, "
        "load generator on the same cores)"
    )
    plot(points, args.plot, title)
    print()
    print(f"plot: {args.plot}")
    errors = sum(p.errors for p in points)
    if errors:
        print(f"errors: {errors} flows went wrong")


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", default="echo,mrtr", help="comma-separated: echo,mrtr")
    parser.add_argument("--concurrency", default="1,16,64,256", help="connections per point")
    parser.add_argument("--workers", default="1,2", help="uvicorn worker processes")
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds per point")
    parser.add_argument("--warmup", type=int, default=200, help="untimed flows per point")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT, help="the PNG to write")
    parser.add_argument(
        "--quick", action="store_true", help="echo, connections 1,4, 1 worker, 0.5 s (tests)"
    )
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--serve-workers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--flow", choices=FLOWS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pids", help=argparse.SUPPRESS)
    parser.add_argument(
        "--load-concurrency", dest="load_concurrency", type=int, help=argparse.SUPPRESS
    )
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.serve_workers)
        return
    if args.load:
        args.concurrency = args.load_concurrency
        load_main(args)
        return
    if args.quick:
        args.flows, args.concurrency, args.workers = "echo", "1,4", "1"
        args.seconds, args.warmup = 0.5, 20
    args.flows = [flow for flow in args.flows.split(",") if flow]
    unknown = set(args.flows) - set(FLOWS)
    if unknown:
        parser.error(f"unknown flows: {', '.join(sorted(unknown))}")
    args.concurrency, args.workers = _ints(args.concurrency), _ints(args.workers)
    orchestrate(args)


if __name__ == "__main__":
    main()
