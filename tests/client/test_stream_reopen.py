"""A legacy session's standalone GET stream, closed by the server (or a proxy between),
is opened again after the server's retry, resuming after the last event id; a server
that refuses the stream is not asked again."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from snodo.client import Client

SESSION = "s-1"


@contextlib.asynccontextmanager
async def closing_server(refuse_get: bool = False) -> AsyncIterator[tuple[str, list[str | None]]]:
    """A legacy server in raw HTTP: initialize, notifications, tools/list; each GET is
    given one list-changed event (ids e1, e2, ...) and closed. Yields its URL and the
    Last-Event-ID of every GET."""
    resumed: list[str | None] = []
    events = iter(range(1, 1000))

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            method = head.split(" ", 1)[0]
            fields = {}
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            body = await reader.readexactly(int(fields.get("content-length", "0")))
            if method == "GET":
                resumed.append(fields.get("last-event-id"))
                if refuse_get:
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                    return
                number = next(events)
                note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                event = f"id: e{number}\nretry: 50\ndata: {json.dumps(note)}\n\n".encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    + f"content-length: {len(event)}\r\n\r\n".encode()
                    + event
                )
                return
            if method == "DELETE":
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                return
            message = json.loads(body)
            if "id" not in message:
                writer.write(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                return
            if message["method"] == "initialize":
                result: dict[str, Any] = {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "closing", "version": "1"},
                }
            else:
                result = {"tools": []}
            answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                + f"mcp-session-id: {SESSION}\r\ncontent-length: {len(answer)}\r\n\r\n".encode()
                + answer
            )
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            with contextlib.suppress(Exception):
                await writer.drain()
                writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}/mcp", resumed


def test_a_closed_stream_is_opened_again_after_the_last_event() -> None:
    heard: list[str] = []

    async def main() -> list[str | None]:
        async with closing_server() as (url, resumed):
            client = Client.http(
                url, era="legacy", on_notification=lambda n: heard.append(n["method"])
            )
            async with client:
                await client.list_tools()
                for _ in range(100):
                    if len(heard) >= 3:
                        break
                    await asyncio.sleep(0.05)
            return resumed

    resumed = asyncio.run(asyncio.wait_for(main(), 30))
    assert heard[:3] == ["notifications/tools/list_changed"] * 3
    assert resumed[:3] == [None, "e1", "e2"]


def test_a_refused_stream_is_not_asked_for_again() -> None:
    async def main() -> list[str | None]:
        async with closing_server(refuse_get=True) as (url, resumed):
            async with Client.http(url, era="legacy") as client:
                await client.list_tools()
                await asyncio.sleep(1.2)  # more than two backoffs
                await client.list_tools()
            return resumed

    assert asyncio.run(asyncio.wait_for(main(), 30)) == [None]
