"""CPU seconds a fresh process spends before it serves: importing the server API, and a
whole ``snodo list`` of a server file (the client, the server in process, one answer).

Run from the repository root:

    .venv/bin/python bench/startup.py [--runs 9] [--quick]

Each row is the median over ``--runs`` fresh interpreters of the child's user + system
CPU seconds (load on the machine stretches wall time, much less CPU time), with its
bytecode already written, as after an install:

* **floor**: ``python -c pass``;
* **snodo**: ``from snodo import Server``, then ``snodo list examples/preferences.py``;
* **official**: ``from mcp.server.mcpserver import MCPServer`` (``mcp`` 2.3.0, the
  bench extra).

Start-up is paid by every stdio server a client launches, every worker a process
manager starts, and every command-line call.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES: dict[str, list[str]] = {
    "floor: python -c pass": ["-c", "pass"],
    "snodo: from snodo import Server": ["-c", "from snodo import Server"],
    "official: from mcp.server.mcpserver import MCPServer": [
        "-c",
        "from mcp.server.mcpserver import MCPServer",
    ],
    "snodo list examples/preferences.py": [
        "-m",
        "snodo",
        "list",
        "examples/preferences.py",
        "--output",
        "json",
    ],
}


def cpu_seconds(argv: list[str]) -> float:
    """The child's user + system CPU seconds; it must succeed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = os.times()
    subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=120,
    )
    after = os.times()
    return (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="2 runs each")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs
    medians: dict[str, float] = {}
    for name, argv in CASES.items():
        cpu_seconds(argv)  # writes what bytecode is missing
        medians[name] = statistics.median(cpu_seconds(argv) for _ in range(runs))
    floor = medians["floor: python -c pass"]
    official = medians["official: from mcp.server.mcpserver import MCPServer"]
    print(f"start-up, CPU seconds, median of {runs} fresh processes\n")
    print("| case | CPU s | x official |")
    print("|---|---|---|")
    for name, seconds in medians.items():
        ratio = f"{seconds / official:.2f}" if name.startswith("snodo:") else "-"
        print(f"| {name} | {seconds:.3f} | {ratio} |")
    print(f"\nEach includes the floor's {floor:.3f} s.")


if __name__ == "__main__":
    main()
