"""The preference flow end to end over real transports, printing every round.

Starts examples/preferences.py as a server subprocess, once over stdio and once over
Streamable HTTP on a free loopback port, and drives the tool, the resource and the
prompt through their MRTR rounds with a scripted user. Exits non-zero if any flow
ends differently than it must.

    python examples/walkthrough.py
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from snodo.client import Client
from snodo.client.transports import ClientTransport, HttpTransport, StdioTransport

HERE = Path(__file__).resolve().parent
TARGET = f"{HERE / 'preferences.py'}:server"
EXPECTED = "Would save: theme dark, language de."
ANSWERS = {"theme": "dark", "language": "de", "confirm": True}


def user(params: dict[str, Any]) -> dict[str, Any]:
    field = next(iter(params["requestedSchema"]["properties"]))
    print(f"    server asks: {params['message']!r} -> user answers {field}={ANSWERS[field]!r}")
    return {"action": "accept", "content": {field: ANSWERS[field]}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "snodo", "run", TARGET, "--transport", "http", "--port", str(port)]
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the HTTP server did not start")
            await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def run_flows(label: str, transport: ClientTransport) -> list[str]:
    problems = []
    async with Client(transport, elicitation=user) as client:
        flows: list[tuple[str, Callable[[], Awaitable[Any]], Callable[[Any], str]]] = [
            ("tool", lambda: client.call_tool("preferences"), lambda r: r.content[0].text),
            (
                "resource",
                lambda: client.read_resource("prefs://summary"),
                lambda r: r.contents[0].text,
            ),
            (
                "prompt",
                lambda: client.get_prompt("preferences_prompt"),
                lambda r: r.messages[0].content.text.removeprefix("User preferences: "),
            ),
        ]
        for name, start, text_of in flows:
            print(f"  {label} {name}:")
            text = text_of(await start())
            print(f"    completed: {text}")
            if text != EXPECTED:
                problems.append(f"{label} {name}: {text!r}")
    return problems


async def main() -> int:
    problems: list[str] = []
    print("stdio:")
    stdio = StdioTransport([sys.executable, "-m", "snodo", "run", TARGET, "--transport", "stdio"])
    problems += await run_flows("stdio", stdio)
    print("http:")
    async with http_server() as url:
        problems += await run_flows("http", HttpTransport(url))
    for problem in problems:
        print(f"FAIL {problem}")
    print(f"walkthrough: {6 - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
