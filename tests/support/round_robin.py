"""A load balancer with no affinity at all: every HTTP request goes to the next worker.

Each request is read whole (head and ``content-length`` body), sent to the next backend
on a fresh connection with ``connection: close``, and the backend's answer is streamed
back as it comes (SSE included) until the backend closes; then the client's connection
is closed too, so its next request is a new one and goes to the other worker. A backend
that refuses the connection is skipped, as a balancer's health check would. Runs in a
thread of its own (``RoundRobin(...).start()``), so synchronous tests and subprocess
clients can use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections.abc import Sequence

__all__ = ["RoundRobin"]


class RoundRobin:
    def __init__(self, backends: Sequence[int]) -> None:
        self.backends = list(backends)
        self.routed: list[tuple[str, int]] = []
        """(what, backend port) of every request, in order: the HTTP method, and for a
        POST the JSON-RPC method (``response`` for a client's answer)."""
        self._turn = itertools.cycle(range(len(self.backends)))
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> RoundRobin:
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            self._loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            length = 0
            kept = [lines[0]]
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
                if line and name.strip().lower() not in ("connection", "keep-alive"):
                    kept.append(line)
            body = await reader.readexactly(length)
            request = ("\r\n".join([*kept, "connection: close"]) + "\r\n\r\n").encode() + body
            await self._forward(_what(lines[0], body), request, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _forward(
        self,
        line: str,
        request: bytes,
        client: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        for _ in range(len(self.backends)):
            port = self.backends[next(self._turn)]
            try:
                back_reader, back_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue  # that worker is down: the next one
            self.routed.append((line, port))
            back_writer.write(request)
            await back_writer.drain()
            gone = asyncio.ensure_future(client.read(1))  # the client hung up (a GET ended)
            try:
                while True:
                    chunk = asyncio.ensure_future(back_reader.read(65536))
                    await asyncio.wait({chunk, gone}, return_when="FIRST_COMPLETED")
                    if not chunk.done():
                        chunk.cancel()
                        break
                    data = chunk.result()
                    if not data:
                        break
                    writer.write(data)
                    await writer.drain()
            finally:
                gone.cancel()
                back_writer.close()
            return
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
        await writer.drain()


def _what(line: str, body: bytes) -> str:
    verb = line.split(" ", 1)[0]
    if verb != "POST":
        return verb
    try:
        message = json.loads(body)
    except ValueError:
        return "POST"
    if isinstance(message, dict):
        return f"POST {message.get('method', 'response')}"
    return "POST batch"


if __name__ == "__main__":  # python -m tests.support.round_robin PORT BACKEND_PORT...
    import sys

    balancer = RoundRobin([int(port) for port in sys.argv[2:]])
    balancer.port = int(sys.argv[1])

    async def serve() -> None:
        server = await asyncio.start_server(balancer._connection, "127.0.0.1", balancer.port)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())
