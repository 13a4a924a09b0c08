"""The keep-alive race, against a loopback server that closes connections on cue.

A server closes an idle keep-alive connection just as the client reuses it: the
request is lost before the server began it, and snodo's HTTP client sends it again on
a new connection. It never sends a request twice otherwise: not when a fresh connection
fails, and not when the answer was cut off after its first bytes. Both of the client's
ways out are held to it: its own HTTP/1.1 (``http11``) and httpx (``httpx_wire``, with
the connections of ``keepalive.resending``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpcore
import httpx
import pytest

from snodo.client.transports import TransportError
from snodo.client.transports.http import HttpTransport
from snodo.client.transports.keepalive import Unanswered, _Stream, resending

Reuse = Callable[[asyncio.StreamWriter], Awaitable[None]]
"""What the server does with a request that comes on a connection it answered before."""


class Server:
    """Answers each connection's first request with a keep-alive JSON-RPC result; a
    later request on the same connection gets ``on_reuse``; ``on_first`` replaces the
    first answer when given."""

    def __init__(self, on_reuse: Reuse | None = None, on_first: Reuse | None = None) -> None:
        self.on_reuse = on_reuse
        self.on_first = on_first
        self.received: list[tuple[int, str]] = []
        """(connection number, JSON-RPC id) of every request read."""
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length)
                request = json.loads(body)
                self.received.append((number, request["id"]))
                special = self.on_first if served == 0 else self.on_reuse
                if special is not None:
                    await special(writer)
                    return
                answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {}})
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    + f"content-length: {len(answer)}\r\n\r\n{answer}".encode()
                )
                await writer.drain()
                served += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _close(writer: asyncio.StreamWriter) -> None:
    """Close without a byte of answer: the idle close that meets the reuse."""
    writer.close()


async def _half_answer(writer: asyncio.StreamWriter) -> None:
    """Begin the answer, then close."""
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    await writer.drain()
    writer.close()


def _message(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {}}


WIRES = ["http11", "httpx"]


async def _calls(server: Server, count: int, wire: str) -> list[Any]:
    """``count`` requests one after another on one client; each outcome (the response,
    or the exception)."""
    listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    if wire == "httpx":
        made = httpx.AsyncClient(transport=resending(httpx.AsyncHTTPTransport()))
        transport = HttpTransport(url, client=made)
    else:
        transport = HttpTransport(url)
    assert type(transport.wire).__name__ == {"http11": "Origin", "httpx": "HttpxWire"}[wire]
    outcomes: list[Any] = []
    try:
        for rid in range(1, count + 1):
            try:
                outcomes.append(await transport.request(_message(rid), {}, lambda note: None))
            except TransportError as exc:
                outcomes.append(exc)
    finally:
        await transport.close()
        listening.close()
        await listening.wait_closed()
    return outcomes


@pytest.mark.parametrize("wire", WIRES)
def test_a_request_lost_by_a_reused_connection_is_sent_again(wire: str) -> None:
    server = Server(on_reuse=_close)
    first, second = asyncio.run(_calls(server, 2, wire))
    assert first["id"] == 1 and second["id"] == 2, second
    # Lost on the reused first connection, answered on a new one.
    assert server.received == [(1, 1), (1, 2), (2, 2)]


@pytest.mark.parametrize("wire", WIRES)
def test_an_answer_cut_off_after_its_first_bytes_is_not_sent_again(wire: str) -> None:
    server = Server(on_reuse=_half_answer)
    first, second = asyncio.run(_calls(server, 2, wire))
    assert first["id"] == 1
    assert isinstance(second, TransportError)
    assert server.received == [(1, 1), (1, 2)]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("fails", [_close, _half_answer])
def test_a_fresh_connection_that_fails_is_not_sent_again(fails: Reuse, wire: str) -> None:
    server = Server(on_first=fails)
    [only] = asyncio.run(_calls(server, 1, wire))
    assert isinstance(only, TransportError)
    assert server.received == [(1, 1)]


def test_httpx_alone_fails_the_race() -> None:
    """The race as httpx's pool meets it: the second request fails (the soak test's
    ``ReadError`` or its ``RemoteProtocolError``)."""

    async def scenario() -> tuple[int, BaseException | None]:
        server = Server(on_reuse=_close)
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = listening.sockets[0].getsockname()[1]
        failed: BaseException | None = None
        async with httpx.AsyncClient() as client:
            url = f"http://127.0.0.1:{port}/"
            await client.post(url, json=_message(1))
            try:
                await client.post(url, json=_message(2))
            except httpx.TransportError as exc:
                failed = exc
        listening.close()
        await listening.wait_closed()
        return server.connections, failed

    connections, failed = asyncio.run(scenario())
    assert connections == 1
    assert isinstance(failed, httpx.ReadError | httpx.RemoteProtocolError)


class _Socket:
    """A network stream that answers each request with a few bytes, and fails every read
    and write once ``fail`` is set or it is closed."""

    def __init__(self) -> None:
        self.fail = False
        self.closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.fail or self.closed:
            raise httpcore.ReadError("the socket is gone")
        return b"HTTP/1.1 200 OK\r\n"

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self.fail or self.closed:
            raise httpcore.WriteError("the socket is gone")

    async def aclose(self) -> None:
        self.closed = True


@pytest.mark.parametrize("closed_by", ["the server", "its own pool"])
def test_a_request_on_a_connection_the_pool_closed_is_not_sent_again(closed_by: str) -> None:
    """A reused connection that fails before any byte of its answer is the race (sent
    again), unless the client's own pool closed it under the request: httpcore's pool
    can close a connection it has just handed to a waiting request (encode/httpcore#1110),
    and that request may have reached the server."""

    async def scenario() -> BaseException:
        socket = _Socket()
        stream = _Stream(socket, (httpcore.ReadError, httpcore.WriteError))
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        await stream.read(65536)  # one exchange: the connection is reused from here
        await stream.write(b"POST / HTTP/1.1\r\n\r\n")
        if closed_by == "the server":
            socket.fail = True
        else:
            await stream.aclose()
        with pytest.raises((Unanswered, httpcore.ReadError)) as failed:
            await stream.read(65536)
        return failed.value

    failed = asyncio.run(scenario())
    if closed_by == "the server":
        assert isinstance(failed, Unanswered)
    else:
        assert not isinstance(failed, Unanswered)
        assert isinstance(failed, httpcore.ReadError)
