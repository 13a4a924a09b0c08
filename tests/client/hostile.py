"""Small hostile servers for the client's hardening tests: loopback HTTP, stdio scripts,
and a scripted in-process transport. Each misbehaves in one named way."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

Respond = Callable[[dict[str, Any], asyncio.StreamWriter], Awaitable[None]]
"""Writes whatever raw HTTP it likes for one parsed JSON-RPC request."""


@contextlib.asynccontextmanager
async def hostile_http(respond: Respond) -> AsyncIterator[str]:
    """An HTTP server on 127.0.0.1 that hands each POSTed message to ``respond``; the
    connection is closed after. Yields the endpoint URL."""
    tasks: set[asyncio.Task[None]] = set()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = await reader.readexactly(length) if length else b"{}"
            await respond(json.loads(body), writer)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            tasks.discard(task)

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def head(status: int = 200, kind: str = "application/json", **extra: str) -> bytes:
    """A response head without Content-Length: the body ends when the connection does."""
    lines = [f"HTTP/1.1 {status} X", f"content-type: {kind}", "connection: close"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in extra.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def stdio_script(tmp: Path, body: str) -> list[str]:
    """argv running ``body`` as a stdio server; ``body`` sees ``requests()`` (parsed
    request lines; notifications skipped), ``send(obj)`` and ``raw(bytes)``."""
    path = tmp / "hostile_server.py"
    path.write_text(
        "import json, sys, time, signal\n"
        "def requests():\n"
        "    for line in sys.stdin:\n"
        "        message = json.loads(line)\n"
        "        if 'id' in message:\n"
        "            yield message\n"
        "def raw(data):\n"
        "    sys.stdout.buffer.write(data); sys.stdout.buffer.flush()\n"
        "def send(obj):\n"
        "    raw(json.dumps(obj).encode() + b'\\n')\n" + body
    )
    return [sys.executable, str(path)]


class Scripted:
    """An in-process transport answering each request with the next scripted response
    message (``id`` filled in), recording what was sent."""

    def __init__(self, *responses: Mapping[str, Any]) -> None:
        self.responses = list(responses)
        self.sent: list[dict[str, Any]] = []

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: Any
    ) -> dict[str, Any]:
        self.sent.append(message)
        response = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return {"jsonrpc": "2.0", "id": message["id"], **response}

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        yield {}

    async def close(self) -> None:
        return None
