"""What a proxy costs: snodo's server called directly, through ``snodo.gateway.proxy``,
and through FastMCP's proxy.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/proxy_flow.py [--flows mrtr,echo] [--rounds 5] [--seconds 3]
                                         [--concurrency 16] [--requests 20000] [--quick]

The backend is ``http_flow.py``'s snodo app (``bench/flows.py``: the two-round
elicitation flow **mrtr**, the one-round **echo**), one uvicorn worker. In front of it,
each in a process of its own served the same way (one uvicorn worker, httptools,
uvloop), two proxies whose clients reach it over loopback HTTP: snodo's, a ``Server``
from ``snodo.gateway.proxy`` on ``Client.http``; and FastMCP 4.2.3's (``create_proxy``
of the backend's URL, its ``http_app``), run with the interpreter of ``.venv-fastmcp``
(made by ``scripts/_env.sh``; without it that proxy is left out, and said so). The
load generator is ``http_flow.py``'s, fed the same request bytes: against the backend
directly and through each proxy, taking turns for ``--rounds`` rounds. Before timing,
each proxy passes ``http_flow.py``'s validation (both flows' answers, a tampered state
refused, a state replayed with other arguments refused, header mismatches refused).

Reported, medians over rounds: server CPU per request of the backend called directly;
through each proxy, the proxy's own CPU and the backend's, their sum as a multiple of
the direct figure, and the proxy's own CPU alone as a multiple of it (what a gateway
adds to a deployment, against what the server it fronts spends). ``--concurrency 1``
measures sequential calls, as an agent calling one tool after another makes them.
No timing assertions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
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
import http_flow
from flows import APPS, FLOWS, REQUESTS_PER_FLOW, snodo_build


def proxy_app(backend_port: int) -> Any:
    from snodo.client import Client  # noqa: PLC0415 - the proxy's process only
    from snodo.gateway import proxy  # noqa: PLC0415
    from snodo.server import State  # noqa: PLC0415
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    url = f"http://127.0.0.1:{backend_port}/mcp"
    # Like the backend (its keyring has no guard), the flows answer one state twice.
    connect = lambda **options: Client.http(url, **options)  # noqa: E731
    return HttpApp(proxy(connect, name="bench-proxy", state=State(guard=False)))


def fastmcp_app(backend_port: int) -> Any:
    """FastMCP's proxy of the backend (run with the interpreter of ``.venv-fastmcp``)."""
    from fastmcp.server import create_proxy  # type: ignore[import-not-found]  # noqa: PLC0415

    url = f"http://127.0.0.1:{backend_port}/mcp"
    return create_proxy(url, name="bench-fastmcp-proxy").http_app(path="/mcp")


FASTMCP_PYTHON = Path(__file__).resolve().parents[1] / ".venv-fastmcp" / "bin" / "python"
"""FastMCP 4.2.3's own venv (``interop/fastmcp/requirements.txt``)."""


def serve(kind: str, backend_port: int | None) -> None:
    if kind == "snodo":
        harness.serve_uvicorn(APPS[kind](), proxy_headers=False)
        return
    assert backend_port is not None
    # Both proxies without uvicorn's proxy-headers middleware, as snodo's backend.
    app = proxy_app(backend_port) if kind == "proxy" else fastmcp_app(backend_port)
    harness.serve_uvicorn(app, proxy_headers=False)


def _measure(port: int, pids: str, flow: str, args: argparse.Namespace) -> dict[str, Any]:
    server = argparse.Namespace(port=port, pid=pids, kind=flow, log_text=lambda: "")
    return http_flow._measure(server, flow, args)  # type: ignore[arg-type]


PROXIES = {"proxy": "snodo proxy", "fastmcp": "FastMCP 4.2.3 proxy"}


def orchestrate(args: argparse.Namespace) -> None:
    flows = [flow for flow in args.flows.split(",") if flow]
    print(
        f"proxy_flow: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, one uvicorn worker each (httptools, uvloop); snodo "
        f"{snodo_build()}"
    )
    print(
        f"concurrency {args.concurrency}; {args.rounds} rounds x (<= {args.requests} requests "
        f"or <= {args.seconds:g} s, after {args.warmup} warm-up flows), direct and each proxy "
        "taking turns; medians over rounds"
    )
    kinds = ["proxy", "fastmcp"]
    if args.no_fastmcp or not FASTMCP_PYTHON.exists():
        kinds.remove("fastmcp")
        print(f"FastMCP's proxy left out ({FASTMCP_PYTHON} is missing or --no-fastmcp)")
    with contextlib.ExitStack() as logs:
        children: list[harness.Child] = []
        try:
            log = logs.enter_context(tempfile.TemporaryFile("w+b"))
            backend = harness.start(__file__, "snodo", log)
            children.append(backend)
            fronts: dict[str, harness.Child] = {}
            for kind in kinds:
                log = logs.enter_context(tempfile.TemporaryFile("w+b"))
                python = str(FASTMCP_PYTHON) if kind == "fastmcp" else sys.executable
                extra = ("--backend-port", str(backend.port))
                fronts[kind] = harness.start(__file__, kind, log, extra, python=python)
                children.append(fronts[kind])
            for child in children:
                checks = http_flow.validate("snodo", child.port)
                print(f"validated {child.kind:7} on 127.0.0.1:{child.port}: {checks} checks")
            runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
            for round_index in range(args.rounds):
                for flow in flows:
                    turns = [("direct", backend.port, str(backend.pid))]
                    turns += [
                        (kind, front.port, f"{front.pid},{backend.pid}")
                        for kind, front in fronts.items()
                    ]
                    shift = round_index % len(turns)
                    for name, port, pids in turns[shift:] + turns[:shift]:
                        runs.setdefault((name, flow), []).append(_measure(port, pids, flow, args))
            figures = _report(runs, flows, list(fronts))
            if args.json:
                Path(args.json).write_text(json.dumps(figures))
        finally:
            harness.stop([child.process for child in children])


def _report(
    runs: dict[tuple[str, str], list[dict[str, Any]]], flows: list[str], kinds: list[str]
) -> dict[str, dict[str, float]]:
    """Print each flow's figures; return them: per flow, the direct call's CPU µs per
    request and each proxy's own, and its multiple of the direct call (paired by round)."""
    figures: dict[str, dict[str, float]] = {}
    for flow in flows:
        per = REQUESTS_PER_FLOW[flow]
        direct = [r["server_cpu"] / r["requests"] * 1e6 for r in runs[("direct", flow)]]
        errors = sum(r["errors"] for r in runs[("direct", flow)])
        print()
        print(f"flow {flow} ({per} request(s) per flow), server CPU µs per request")
        print(f"  direct: backend {statistics.median(direct):7.1f}; errors {errors}")
        figures[flow] = {"direct": statistics.median(direct)}
        for kind in kinds:
            proxied = runs[(kind, flow)]
            front = [r["server_cpus"][0] / r["requests"] * 1e6 for r in proxied]
            behind = [r["server_cpus"][1] / r["requests"] * 1e6 for r in proxied]
            total = [a + b for a, b in zip(front, behind, strict=True)]
            paired = [t / d for t, d in zip(total, direct, strict=True)]
            alone = [f / d for f, d in zip(front, direct, strict=True)]
            errors = sum(r["errors"] for r in proxied)
            print(
                f"  {PROXIES[kind]}: proxy {statistics.median(front):7.1f} + backend "
                f"{statistics.median(behind):7.1f} = {statistics.median(total):7.1f} "
                f"(x{statistics.median(paired):.2f} the direct call; the proxy alone "
                f"x{statistics.median(alone):.2f}; paired by round); errors {errors}"
            )
            figures[flow][kind] = statistics.median(front)
            figures[flow][f"{kind} alone"] = statistics.median(alone)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", default=",".join(FLOWS))
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke test)")
    parser.add_argument("--no-fastmcp", action="store_true", help="snodo's proxy only")
    parser.add_argument("--serve", choices=("snodo", "proxy", "fastmcp"), help=argparse.SUPPRESS)
    parser.add_argument("--backend-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)  # bench/speed.py's figures
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.seconds, args.requests, args.warmup = 1, 0.5, 500, 20
    if args.serve:
        serve(args.serve, args.backend_port)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
