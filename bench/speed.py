"""The client and gateway speed goals, measured side by side in one run.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/speed.py [--no-compiled] [--quick]

One after the other, on the same machine and sources, each script printing its own
table as it runs:

* ``client_flow.py``: CPU per sequential ``tools/call`` of snodo's client, the official
  SDK's and FastMCP's, against the same server;
* ``proxy_flow.py``, at concurrency 16 and sequentially (``--concurrency 1``): the CPU
  of ``snodo proxy`` per request against the backend called directly, FastMCP's proxy
  beside it;
* ``features.py --cases inline,thread``: the thread hop, a plain ``def`` tool in the
  server's pool against the same tool ``inline=True``, server CPU per request over HTTP;
* ``threads.py``: the same hop in process, one call at a time, with its floors;
* ``instructions.py`` on the compiled build (``scripts/compiled``, under valgrind):
  instructions per request of the server against the floor, echo and MRTR (left out with
  ``--no-compiled``, or when valgrind is missing).

Then one table: each goal, what this run measured, and whether it holds. The goals are
what a release must keep: the client at most 0.5x the official client's CPU per call,
the proxy's own CPU per request at most 3x the direct call's, a thread hop at most 15 µs,
the compiled server within 1.2x the floor. A figure of this machine, not an assertion:
``--quick`` (one short round of each) only checks that everything runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

CLIENT_GOAL = 0.5
PROXY_GOAL = 3.0
HOP_GOAL = 15.0
COMPILED_GOAL = 1.2


def run(script: str, options: list[str], quick: bool, compiled: bool = False) -> Any:
    """``script`` with ``options`` (its output passed through); the figures it wrote."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        command = [sys.executable, str(BENCH / script), *options, f"--json={out.name}"]
        if quick:
            command.append("--quick")
        if compiled:
            command = ["bash", str(ROOT / "scripts" / "compiled"), "python", *command[1:]]
        shown = ["scripts/compiled python"] if compiled else []
        print("\n$ " + " ".join([*shown, f"bench/{script}", *options]))
        sys.stdout.flush()
        subprocess.run(command, cwd=ROOT, check=True)
        text = out.read()
    if not text:
        raise RuntimeError(f"{script} wrote no figures")
    return json.loads(text)


def goals(args: argparse.Namespace) -> list[tuple[str, str, bool | None]]:
    """Run every measurement; each goal, what was measured and whether it holds."""
    rows: list[tuple[str, str, bool | None]] = []
    clients = run("client_flow.py", ["--clients=snodo,official,fastmcp"], args.quick)["client"]
    if "official" in clients:
        mine = clients["snodo"] / clients["official"]
        rows.append(
            (
                f"client CPU per call <= {CLIENT_GOAL}x the official SDK client's",
                f"{clients['snodo']:.0f} against {clients['official']:.0f} µs: {mine:.2f}x",
                mine <= CLIENT_GOAL,
            )
        )
    for concurrency in (16, 1):
        proxied = run("proxy_flow.py", [f"--concurrency={concurrency}"], args.quick)
        for flow, figures in proxied.items():
            alone = figures["proxy alone"]
            fastmcp = figures.get("fastmcp alone")
            beside = f"; FastMCP's proxy x{fastmcp:.0f}" if fastmcp is not None else ""
            rows.append(
                (
                    f"snodo proxy's own CPU <= {PROXY_GOAL:g}x direct: {flow}, "
                    f"concurrency {concurrency}",
                    f"{figures['proxy']:.0f} against {figures['direct']:.0f} µs a request: "
                    f"x{alone:.2f}{beside}",
                    alone <= PROXY_GOAL,
                )
            )
    hop = run("features.py", ["--cases=inline,thread"], args.quick)["thread - inline"]
    rows.append(
        (
            f"thread hop <= {HOP_GOAL:g} µs (server CPU per request, HTTP, concurrency 16)",
            f"{hop['delta']:+.1f} µs (paired {hop['paired']:+.1f})",
            hop["paired"] <= HOP_GOAL,
        )
    )
    alone = run("threads.py", [], args.quick)
    rows.append(
        (
            "thread hop in process, one call at a time (for reference)",
            f"{alone['hop']:.1f} µs; floors: two bare threads {alone['floor']:.1f}, "
            f"the loop and a bare thread {alone['loop floor']:.1f}",
            None,
        )
    )
    if args.no_compiled or shutil.which("valgrind") is None:
        rows.append((f"compiled server <= {COMPILED_GOAL}x the floor", "not measured", None))
        return rows
    options = ["--flows=echo,mrtr", "--apps=floor,snodo", "--requests=300"]
    counted = run("instructions.py", options, args.quick, compiled=True)
    for flow, apps in counted.items():
        multiple = apps["snodo"] / apps["floor"]
        rows.append(
            (
                f"compiled server <= {COMPILED_GOAL}x the floor: {flow}",
                f"{apps['snodo']:,.0f} against {apps['floor']:,.0f} instructions a request: "
                f"{multiple:.2f}x",
                multiple <= COMPILED_GOAL,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-compiled", action="store_true", help="skip the compiled build")
    parser.add_argument("--quick", action="store_true", help="one short round of each")
    args = parser.parse_args()
    started = time.monotonic()
    print(f"speed: {time.strftime('%Y-%m-%d %H:%M')}{', quick' if args.quick else ''}")
    rows = goals(args)
    print(f"\nspeed goals, one run of {(time.monotonic() - started) / 60:.0f} min:\n")
    print("| goal | measured | holds |")
    print("|---|---|---|")
    for goal, measured, holds in rows:
        verdict = "-" if holds is None else "yes" if holds else "no"
        print(f"| {goal} | {measured} | {verdict} |")


if __name__ == "__main__":
    main()
