"""The smoke test of an installed snodo (scripts/release runs it in each bare venv).

    VENV/bin/python scripts/release_smoke.py --expect compiled|pure EXAMPLE.py

Run by the venv's interpreter from a directory outside the checkout, so every import is
of the installed distribution: it imports every module of snodo and the wire packages,
checks which build is installed (``snodo version`` says the same), serves the example
with ``snodo run`` over HTTP and runs one MRTR flow against it with the installed
client. Prints one line per step; exits 1 on the first failure.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import pkgutil
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOTS = (
    "snodo",
    "snodo_wire",
    "snodo_wire_2025_11_25",
    "snodo_wire_tasks",
    "snodo_wire_apps",
    "snodo_wire_skills",
)


def import_everything() -> int:
    count = 0
    for root in ROOTS:
        package = importlib.import_module(root)
        count += 1
        for found in pkgutil.walk_packages(package.__path__, f"{root}."):
            importlib.import_module(found.name)
            count += 1
    return count


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def one_flow(url: str) -> str:
    from snodo.client import Client  # noqa: PLC0415 - the installed one

    answers = {"theme": "dark", "language": "ja", "confirm": True}

    def elicit(params: dict[str, Any]) -> dict[str, Any]:
        [field] = params["requestedSchema"]["properties"]
        return {"action": "accept", "content": {field: answers[field]}}

    async with Client.http(url, elicitation=elicit) as client:
        result = await client.call_tool("preferences")
        return str(result.content[0].text)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--expect", choices=("compiled", "pure"), required=True)
    parser.add_argument("example", type=Path)
    args = parser.parse_args()
    import snodo.cli  # noqa: PLC0415

    print(f"imported {import_everything()} modules from {Path(snodo.cli.__file__).parents[1]}")
    build = snodo.cli.build()
    if build.split()[0] != args.expect:
        print(f"FAIL: expected the {args.expect} build, found {build}")
        return 1
    print(f"build: {build}")
    work = Path(tempfile.mkdtemp(prefix="snodo-smoke-"))
    shutil.copy(args.example, work / "example.py")
    port = free_port()
    argv = [sys.executable, "-m", "snodo", "run", "example.py:server", "--transport", "http"]
    server = subprocess.Popen([*argv, "--port", str(port)], cwd=work)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print("FAIL: the example did not start")
                    return 1
                time.sleep(0.1)
        text = asyncio.run(asyncio.wait_for(one_flow(f"http://127.0.0.1:{port}/mcp"), 60))
    finally:
        server.terminate()
        server.wait(10)
    if text != "Would save: theme dark, language ja.":
        print(f"FAIL: the MRTR flow answered {text!r}")
        return 1
    print(f"MRTR flow over HTTP: {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
