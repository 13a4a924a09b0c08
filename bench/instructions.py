"""Instructions per request of the in-process flows, counted by valgrind: no timing noise.

Run from the repository root (needs ``valgrind`` on PATH):

    .venv/bin/python bench/instructions.py [--flows mrtr,echo]
        [--apps 'floor,snodo,snodo core'] [--requests 1000] [--quick]

``--apps`` takes ``official`` too (the official SDK's app; slow under valgrind), and
``snodo-ratelimit`` (snodo behind ``RateLimit`` in memory: what one middleware costs).

The flows and apps are ``inprocess.py``'s (``bench/flows.py`` says what each does), on
the standard asyncio loop rather than uvloop (the same for every app). Each
case runs twice in a fresh child under ``valgrind --tool=cachegrind --cache-sim=no``: once
with ``--requests`` worth of flows after a warm-up, once with the warm-up alone; the
difference of the two totals, divided by the requests, is what a request costs in
instructions, start-up and warm-up cancelled out. Hash seed and address layout are fixed
(``PYTHONHASHSEED=0``, ``setarch -R`` where the system allows it), so on an idle
machine a rerun of the same code gives the same figure to within a few instructions,
which CPU time on a shared machine cannot. (On a busy one, snodo's count moves by up to
about a thousand: its late-request table ticks by the wall clock, 20 times a second,
and a slower run sees more ticks per request.) Between two versions of the code, paths
the change does not touch can move by a few thousand instructions (objects hashed by
address land elsewhere), so a smaller change is better counted on its own function.

Instructions are not time. The floor's instructions are mostly the C of ``json``; the
Python that snodo runs often retires fewer instructions per cycle, so its CPU-time ratio
(``inprocess.py``) can be higher than this one. Under valgrind, OpenSSL takes its portable
SHA-256 (the CPU's SHA extensions are not offered), so hashing counts for more here than
it costs on the CPU: the MRTR flow, which seals and opens state, the most. No timing
assertions; ``--quick`` (a hundred echo requests, floor and snodo) checks that the table
comes out. Each case's child runs once uncounted first (``primed``): the bytecode of
everything it imports is then written before the two counted runs, which would
otherwise each compile what the other had not written yet (millions of instructions in
either run: a hundred requests counted -3,267 each for the floor in one CI run, and
693,482 then -837,827 for snodo in two runs here with an empty bytecode cache; 171,9xx
in three once primed, as counted one run after the other).
"""

import argparse
import asyncio
import functools
import gc
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from flows import REQUESTS_PER_FLOW, snodo_build

APPS = ("floor", "snodo", "snodo core", "official", "snodo-ratelimit")
WARMUP_FLOWS = 20
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def child(app: str, flow: str, flows: int) -> None:
    """Run ``flows`` flows of one case after the warm-up (the process valgrind watches)."""
    import inprocess  # noqa: PLC0415 - only the child imports the apps

    async def main() -> None:
        if app == "snodo core":
            run = inprocess.core_flow(flow)
        else:
            lifespan = inprocess.Lifespan(inprocess.APPS[app]())
            await lifespan.start()
            run = inprocess.asgi_flow(lifespan.app, flow)
        for _ in range(WARMUP_FLOWS):
            if not await run():
                raise RuntimeError(f"{app} answered the {flow} flow wrongly")
        # A full collection walks every object the imports made: where one falls in one
        # run of a pair and not the other, a few requests carry millions of instructions
        # that are no request's. Collected and frozen here, later collections see only
        # what the flows themselves leave.
        gc.collect()
        gc.freeze()
        for _ in range(flows):
            await run()
        # Out at once, from inside the loop: shutting the app, the loop and the
        # interpreter down costs what the flows left behind, which differs between the
        # two runs of a case and is no request's cost.
        os._exit(0)

    asyncio.run(main())


@functools.cache
def _fixed_layout() -> bool:
    """Whether ``setarch -R`` works here (containers may forbid turning ASLR off)."""
    if shutil.which("setarch") is None:
        return False
    probe = subprocess.run(
        ["setarch", platform.machine(), "-R", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


def _child(app: str, flow: str, flows: int, *under: str) -> subprocess.CompletedProcess[str]:
    """The child for one case, run ``under`` a command (valgrind, or nothing)."""
    command = [*under, sys.executable, __file__, "--child", app, flow, str(flows)]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
        check=False,
        timeout=1800,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{app} {flow} failed:\n{done.stderr[-3000:]}")
    return done


def counted(app: str, flow: str, flows: int) -> int:
    """Instructions the child retires from start to exit, warm-up and ``flows`` flows."""
    valgrind = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
    ]
    if _fixed_layout():
        valgrind = ["setarch", platform.machine(), "-R", *valgrind]
    done = _child(app, flow, flows, *valgrind)
    found = _REFS.search(done.stderr)
    if found is None:
        raise RuntimeError(f"{app} {flow}: no count from valgrind:\n{done.stderr[-3000:]}")
    return int(found.group(1).replace(",", ""))


def flows_for(flow: str, requests: int) -> int:
    """Whole flows of ``flow`` that make at least one and about ``requests`` requests."""
    return max(1, requests // REQUESTS_PER_FLOW[flow])


def primed(case: tuple[str, str]) -> None:
    """Run a case's child once, not counted, so that every module it imports (its
    warm-up included) has its bytecode written before the two counted runs. Else the
    two, running side by side, each compile whatever the other has not written yet: the
    compiling (millions of instructions) falls in either, and a hundred requests'
    difference came out negative."""
    flow, app = case
    _child(app, flow, 0)


def per_request(cases: list[tuple[str, str]], requests: int) -> dict[tuple[str, str], float]:
    """Instructions per request of each (flow, app), one child per core at a time
    (valgrind runs its guest on one thread)."""
    runs = {}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(primed, cases))
        for flow, app in cases:
            flows = flows_for(flow, requests)
            for count in (flows, 0):
                runs[(flow, app, count)] = pool.submit(counted, app, flow, count)
    results = {}
    for flow, app in cases:
        flows = flows_for(flow, requests)
        extra = runs[(flow, app, flows)].result() - runs[(flow, app, 0)].result()
        results[(flow, app)] = extra / (flows * REQUESTS_PER_FLOW[flow])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", default="mrtr,echo")
    parser.add_argument("--apps", default="floor,snodo,snodo core")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="100 echo requests")
    parser.add_argument("--child", nargs=3, metavar=("APP", "FLOW", "FLOWS"))
    parser.add_argument("--json", help=argparse.SUPPRESS)  # bench/speed.py's figures
    args = parser.parse_args()
    if args.child:
        app, flow, flows = args.child
        child(app, flow, int(flows))
        return
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py needs valgrind on PATH")
    flows = ["echo"] if args.quick else [f for f in args.flows.split(",") if f]
    requests = 100 if args.quick else args.requests
    apps = ["floor", "snodo"] if args.quick else [app for app in args.apps.split(",") if app]
    if not set(apps) <= set(APPS) or "floor" not in apps:
        sys.exit(f"--apps: from {', '.join(APPS)}, floor included")
    if not flows or not set(flows) <= set(REQUESTS_PER_FLOW):
        sys.exit(f"--flows: from {', '.join(REQUESTS_PER_FLOW)}")
    if requests < 1:
        sys.exit("--requests: at least 1")
    counts = ", ".join(
        f"{flow} {flows_for(flow, requests) * REQUESTS_PER_FLOW[flow]}" for flow in flows
    )
    print(
        f"instructions: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"requests per case ({counts}) after {WARMUP_FLOWS} warm-up flows; "
        f"address layout {'fixed' if _fixed_layout() else 'random (setarch -R refused)'}; "
        f"snodo {snodo_build()}"
    )
    print()
    print("| flow | app | instructions per request | x floor |")
    print("|---|---|---|---|")
    results = per_request([(flow, app) for flow in flows for app in apps], requests)
    for flow in flows:
        floor = results[(flow, "floor")]
        for app in apps:
            value = results[(flow, app)]
            print(f"| {flow} | {app} | {value:,.0f} | {value / floor:.2f}x |")
    if args.json:
        figures = {flow: {app: results[(flow, app)] for app in apps} for flow in flows}
        Path(args.json).write_text(json.dumps(figures))


if __name__ == "__main__":
    main()
