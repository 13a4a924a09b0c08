"""The client's own HTTP/1.1 (``snodo.client.transports.http11``) against loopback servers
that write exactly the bytes each test names: bodies by length, chunked and to the
connection's end, streams read as they come, connections reused and capped, refusals of
what could not be sent safely, timeouts, and TLS."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import struct
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from snodo.client.transports import HttpTransport, TransportError
from snodo.client.transports.http11 import Origin, WireError, WireTimeout

Reader, Writer = asyncio.StreamReader, asyncio.StreamWriter
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, "Raw"], Awaitable[None]]


class Raw:
    """A loopback server handing each connection to ``handler``; counts connections
    and keeps every request head it read."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.heads: list[bytes] = []

    async def read_request(self, reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
        head = await reader.readuntil(b"\r\n\r\n")
        self.heads.append(head)
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return head, await reader.readexactly(length)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer, self)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


async def _serving(raw: Raw, tls: ssl.SSLContext | None = None) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(raw.handle, "127.0.0.1", 0, ssl=tls)
    return server, server.sockets[0].getsockname()[1]


def _json(rid: Any, result: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def _message(rid: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {}}


async def _answer_json(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw
) -> None:
    """Keep-alive JSON answers by length, as many as the connection asks."""
    while True:
        _, body = await raw.read_request(reader)
        answer = _json(json.loads(body)["id"], {"n": raw.connections})
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
        writer.write(b"content-length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()


async def _requests(raw: Raw, count: int, **options: Any) -> list[Any]:
    server, port = await _serving(raw)
    transport = HttpTransport(f"http://127.0.0.1:{port}/mcp", **options)
    try:
        return [
            await transport.request(_message(rid), {}, lambda note: None)
            for rid in range(1, count + 1)
        ]
    finally:
        await transport.close()
        server.close()
        await server.wait_closed()


def test_the_default_transport_is_http11_and_reuses_one_connection() -> None:
    raw = Raw(_answer_json)
    answers = asyncio.run(_requests(raw, 3))
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert raw.connections == 1
    head = raw.heads[0].decode()
    assert head.startswith("POST /mcp HTTP/1.1\r\n")
    assert f"host: 127.0.0.1:{head.split('127.0.0.1:')[1].split(chr(13))[0]}" in head
    assert "content-type: application/json\r\n" in head
    assert "accept: application/json, text/event-stream\r\n" in head


def test_the_same_on_uvloop() -> None:
    """uvloop (what ``snodo run`` and ``snodo proxy`` serve on) hands the protocol a
    transport of its own class."""
    uvloop = pytest.importorskip("uvloop")
    raw = Raw(_answer_json)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        answers = runner.run(_requests(raw, 3))
    assert [a["id"] for a in answers] == [1, 2, 3]
    assert raw.connections == 1


async def _chunked_in_pieces(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw
) -> None:
    _, body = await raw.read_request(reader)
    answer = _json(json.loads(body)["id"], {"text": "x" * 5000})
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    writer.write(b"transfer-encoding: chunked\r\n\r\n")
    for start in range(0, len(answer), 777):
        piece = answer[start : start + 777]
        writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        await writer.drain()
        await asyncio.sleep(0)
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    await raw.read_request(reader)  # the connection stays open: the body said where it ends


def test_a_chunked_body_written_in_pieces_is_read_whole() -> None:
    [answer] = asyncio.run(_requests(Raw(_chunked_in_pieces), 1))
    assert answer["result"]["text"] == "x" * 5000


async def _until_close(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw
) -> None:
    _, body = await raw.read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
    writer.write(_json(json.loads(body)["id"], "to the end"))
    await writer.drain()


def test_a_body_without_length_runs_to_the_connections_end() -> None:
    raw = Raw(_until_close)
    first, second = asyncio.run(_requests(raw, 2))
    assert first["result"] == second["result"] == "to the end"
    assert raw.connections == 2  # such a connection is never reused


async def _reset_midway(reader: Reader, writer: Writer, raw: Raw) -> None:
    """A body to the connection's end, cut by a reset rather than ended by a close."""
    _, body = await raw.read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n")
    writer.write(_json(json.loads(body)["id"], "maybe cut"))  # whole or not: nobody can tell
    await writer.drain()
    await asyncio.sleep(0.05)  # the head and the first bytes go out before the reset
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


def test_a_body_to_the_connections_end_cut_by_a_reset_is_an_error() -> None:
    raw = Raw(_reset_midway)

    async def scenario() -> None:
        server, port = await _serving(raw)
        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp")
        try:
            with pytest.raises(TransportError):
                await transport.request(_message(1), {}, lambda note: None)
        finally:
            await transport.close()
            server.close()

    asyncio.run(scenario())
    assert raw.connections == 1  # a fresh connection's failure: not sent again


async def _big(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw) -> None:
    while True:
        _, body = await raw.read_request(reader)
        answer = _json(json.loads(body)["id"], "y" * 3_000_000)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
        writer.write(b"content-length: %d\r\n\r\n" % len(answer))
        for start in range(0, len(answer), 65536):
            writer.write(answer[start : start + 65536])
            await writer.drain()


def test_a_body_larger_than_the_read_buffer_is_read_whole_on_a_kept_connection() -> None:
    raw = Raw(_big)
    answers = asyncio.run(_requests(raw, 2))
    assert [len(a["result"]) for a in answers] == [3_000_000, 3_000_000]
    assert raw.connections == 1


def test_events_are_handed_on_as_they_come() -> None:
    """The second event is written only once the client has handed on the first: a
    client that waited for the body's end would never see either."""
    handed = asyncio.Event()

    async def stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw) -> None:
        _, body = await raw.read_request(reader)
        rid = json.loads(body)["id"]
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n")
        writer.write(b"transfer-encoding: chunked\r\n\r\n")
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
        event = f"event: message\ndata: {note}\n\n".encode()
        writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        await writer.drain()
        await handed.wait()
        event = b"event: message\ndata: %s\n\n" % _json(rid, "done")
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
        await writer.drain()

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        server, port = await _serving(Raw(stream))
        notes: list[dict[str, Any]] = []

        def on_note(note: dict[str, Any]) -> None:
            notes.append(note)
            handed.set()

        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp")
        try:
            answer = await transport.request(_message(7), {}, on_note)
        finally:
            await transport.close()
            server.close()
        return notes, answer

    notes, answer = asyncio.run(scenario())
    assert [n["method"] for n in notes] == ["notifications/message"]
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": "done"}


async def _extra(reader: Reader, writer: Writer, raw: Raw) -> None:
    """An answer followed by bytes no request asked for, then keep-alive answers."""
    _, body = await raw.read_request(reader)
    answer = _json(json.loads(body)["id"], "first")
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    writer.write(b"content-length: %d\r\n\r\n%s" % (len(answer), answer))
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nstray")
    await writer.drain()
    await _answer_json(reader, writer, raw)


def test_a_connection_that_sent_bytes_no_request_asked_for_is_not_reused() -> None:
    raw = Raw(_extra)
    first, second = asyncio.run(_requests(raw, 2))
    assert first["result"] == "first" and second["id"] == 2
    assert raw.connections == 2


async def _interim(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw) -> None:
    _, body = await raw.read_request(reader)
    answer = _json(json.loads(body)["id"], "after 103")
    writer.write(b"HTTP/1.1 103 Early Hints\r\nlink: </a>; rel=preload\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n")
    writer.write(b"content-length: %d\r\n\r\n%s" % (len(answer), answer))
    await writer.drain()
    await raw.read_request(reader)


def test_an_interim_answer_is_passed_over_for_the_final_one() -> None:
    [answer] = asyncio.run(_requests(Raw(_interim), 1))
    assert answer["result"] == "after 103"


def test_a_header_that_would_end_its_line_early_is_refused_and_nothing_sent() -> None:
    raw = Raw(_answer_json)

    async def scenario() -> None:
        server, port = await _serving(raw)
        transport = HttpTransport(
            f"http://127.0.0.1:{port}/mcp", headers={"x-note": "a\r\nx-injected: yes"}
        )
        try:
            with pytest.raises(TransportError, match="line break"):
                await transport.request(_message(1), {}, lambda note: None)
        finally:
            await transport.close()
            server.close()

    asyncio.run(scenario())
    assert raw.heads == []


def _head_of(lines: list[bytes], at_once: bool = False) -> Handler:
    """A server answering with a head of ``lines``, then a JSON body: written a line at a
    time, or (``at_once``) the whole answer in one write."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw) -> None:
        _, body = await raw.read_request(reader)
        result = _json(json.loads(body)["id"], "whole")
        tail = b"content-length: %d\r\n\r\n%s" % (len(result), result)
        if at_once:
            writer.write(b"\r\n".join([b"HTTP/1.1 200 OK", *lines, tail]))
        else:
            writer.write(b"HTTP/1.1 200 OK\r\n")
            for line in lines:
                writer.write(line + b"\r\n")
                await writer.drain()
            writer.write(tail)
        await writer.drain()
        await reader.read()

    return answer


async def _one_answer(handler: Handler) -> Any:
    """The answer's JSON and headers, or the ``WireError`` it came to."""
    server, port = await _serving(Raw(handler))
    origin = Origin(f"http://127.0.0.1:{port}/mcp")
    try:
        answer = await origin.open("POST", {}, json.dumps(_message(1)).encode())
        body = b"".join([chunk async for chunk in answer.chunks()])
        headers = answer.headers
        await answer.aclose()
        return json.loads(body), headers
    except WireError as refused:
        return refused
    finally:
        await origin.aclose()
        server.close()


def _refused(handler: Handler) -> str:
    found = asyncio.run(asyncio.wait_for(_one_answer(handler), 30))
    assert isinstance(found, WireError), found
    return str(found)


def test_a_head_of_too_many_lines_or_bytes_is_refused_before_it_is_read_whole() -> None:
    many = [b"x-many: %d" % n for n in range(10_000)]
    assert "over 100 lines" in _refused(_head_of(many))
    assert "over 100 lines" in _refused(_head_of(many, at_once=True))
    # One header line of 8 MiB, which httptools would hold until its end.
    huge = [b"x-huge: " + b"a" * (8 * 1024 * 1024)]
    assert "over 65536 bytes" in _refused(_head_of(huge))
    # Nine lines of 8 KB, line by line and in one write.
    long = [b"x-long-%d: " % n + b"b" * 8000 for n in range(9)]
    assert "over 65536 bytes" in _refused(_head_of(long))
    assert "over 65536 bytes" in _refused(_head_of(long, at_once=True))


def test_a_head_within_the_bounds_is_read_and_repeated_lines_joined() -> None:
    lines = [b"x-r: %d" % n for n in range(90)] + [b"x-wide: " + b"c" * 50_000]
    for at_once in (False, True):
        found = asyncio.run(asyncio.wait_for(_one_answer(_head_of(lines, at_once)), 30))
        body, headers = found
        assert body["result"] == "whole"
        assert headers["x-r"] == ", ".join(str(n) for n in range(90))
        assert len(headers["x-wide"]) == 50_000


def test_a_server_that_never_answers_times_out() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: Raw) -> None:
        await raw.read_request(reader)
        await reader.read()  # until the client gives up and closes

    async def scenario() -> BaseException:
        server, port = await _serving(Raw(silent))
        origin = Origin(f"http://127.0.0.1:{port}/mcp", timeout=0.2)
        try:
            with pytest.raises(WireTimeout) as caught:
                await origin.open("POST", {}, b"{}")
        finally:
            await origin.aclose()
            server.close()
        return caught.value

    assert isinstance(asyncio.run(scenario()), WireError)


def test_a_json_answer_is_handed_over_with_its_body_and_a_stream_with_its_head() -> None:
    """The head and body of an answer of stated length often come in two writes (as
    uvicorn sends them): the request wakes once, with the body there. A stream's head
    is handed over before its body, which may come much later (the server sends it only
    once the client has the head, so waiting for it would never end)."""
    sent_head = asyncio.Event()
    go_on = asyncio.Event()

    async def head_then_body(reader: Reader, writer: Writer, raw: Raw) -> None:
        while True:
            _, body = await raw.read_request(reader)
            answer = _json(json.loads(body)["id"], {})
            stream = json.loads(body)["method"] == "stream"
            kind = b"transfer-encoding: chunked" if stream else b"content-length: %d" % len(answer)
            writer.write(b"HTTP/1.1 200 OK\r\n%s\r\n\r\n" % kind)
            await writer.drain()
            sent_head.set()
            await go_on.wait()
            go_on.clear()
            if stream:
                writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(answer), answer))
            else:
                writer.write(answer)
            await writer.drain()

    async def scenario() -> tuple[bool, bool]:
        server, port = await _serving(Raw(head_then_body))
        origin = Origin(f"http://127.0.0.1:{port}/mcp")
        try:
            opened = asyncio.ensure_future(
                origin.open("POST", {}, json.dumps(_message(1)).encode())
            )
            await sent_head.wait()
            await asyncio.sleep(0.05)  # the head alone has reached the client by now
            waited_for_body = not opened.done()
            go_on.set()
            answer = await opened
            json_whole = answer.complete and waited_for_body
            await answer.aclose()
            sent_head.clear()
            message = {**_message(2), "method": "stream"}
            answer = await origin.open("POST", {}, json.dumps(message).encode())
            stream_early = not answer.complete
            go_on.set()
            assert json.loads(b"".join([chunk async for chunk in answer.chunks()]))["id"] == 2
            await answer.aclose()
            return json_whole, stream_early
        finally:
            await origin.aclose()
            server.close()

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == (True, True)


@pytest.mark.parametrize("idle_first", [False, True])
def test_a_silent_answer_on_a_kept_connection_times_out(idle_first: bool) -> None:
    """One timer per connection watches each answer's silence in turn: the one left
    running by the first answer must still end the second, silent one; and on a
    connection that went idle it goes off once and stops (``idle_first``), and the
    next request sets it again."""

    async def once_then_silent(reader: Reader, writer: Writer, raw: Raw) -> None:
        _, body = await raw.read_request(reader)
        answer = _json(json.loads(body)["id"], {})
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(answer), answer))
        await writer.drain()
        await raw.read_request(reader)
        await reader.read()  # silent until the client gives up and closes

    async def read(origin: Origin, rid: int) -> bytes:
        answer = await origin.open("POST", {}, json.dumps(_message(rid)).encode())
        try:
            return b"".join([chunk async for chunk in answer.chunks()])
        finally:
            await answer.aclose()

    async def scenario() -> bool:
        raw = Raw(once_then_silent)
        server, port = await _serving(raw)
        origin = Origin(f"http://127.0.0.1:{port}/mcp", timeout=0.2)
        try:
            assert json.loads(await read(origin, 1))["id"] == 1
            kept = origin.idle[0]
            assert kept.timer is not None  # left running by the first answer
            while idle_first and kept.timer is not None:  # goes off, is not set again
                await asyncio.sleep(0.05)
            with pytest.raises(WireTimeout):
                await read(origin, 2)
            assert raw.connections == 1  # the second request went on the kept connection
            return kept.closed and kept.timer is None
        finally:
            await origin.aclose()
            server.close()

    assert asyncio.run(asyncio.wait_for(scenario(), 60))


def test_requests_beyond_the_connection_cap_wait_for_a_connection() -> None:
    raw = Raw(_answer_json)

    async def scenario() -> list[bytes]:
        server, port = await _serving(raw)
        origin = Origin(f"http://127.0.0.1:{port}/mcp", max_connections=1)

        async def one(rid: int) -> bytes:
            answer = await origin.open("POST", {}, json.dumps(_message(rid)).encode())
            try:
                return b"".join([chunk async for chunk in answer.chunks()])
            finally:
                await answer.aclose()

        try:
            return await asyncio.gather(*(one(rid) for rid in range(1, 6)))
        finally:
            await origin.aclose()
            server.close()

    bodies = asyncio.run(scenario())
    assert [json.loads(body)["id"] for body in bodies] == [1, 2, 3, 4, 5]
    assert raw.connections == 1


def test_a_waiter_cancelled_as_a_connection_is_handed_to_it_passes_it_on() -> None:
    raw = Raw(_answer_json)

    async def scenario() -> bytes:
        server, port = await _serving(raw)
        origin = Origin(f"http://127.0.0.1:{port}/mcp", max_connections=1)
        try:
            first = await origin.open("POST", {}, json.dumps(_message(1)).encode())
            waiting = asyncio.ensure_future(origin._acquire())
            await asyncio.sleep(0)  # now queued for the only connection
            [chunk async for chunk in first.chunks()]
            await first.aclose()  # handed to the waiting request...
            waiting.cancel()  # ...which is cancelled before it runs again
            with pytest.raises(asyncio.CancelledError):
                await waiting
            again = await origin.open("POST", {}, json.dumps(_message(2)).encode())
            body = b"".join([chunk async for chunk in again.chunks()])
            await again.aclose()
            return body
        finally:
            await origin.aclose()
            server.close()

    body = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert json.loads(body)["id"] == 2
    assert raw.connections == 1


def test_a_request_waiting_for_a_connection_fails_when_the_client_closes() -> None:
    raw = Raw(_answer_json)

    async def scenario() -> None:
        server, port = await _serving(raw)
        origin = Origin(f"http://127.0.0.1:{port}/mcp", max_connections=1)
        try:
            first = await origin.open("POST", {}, json.dumps(_message(1)).encode())
            waiting = asyncio.ensure_future(origin._acquire())
            await asyncio.sleep(0)
            await origin.aclose()
            with pytest.raises(WireError, match="closed"):
                await waiting
            await first.aclose()
        finally:
            server.close()

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_an_answer_closed_before_its_end_closes_its_connection() -> None:
    raw = Raw(_big)

    async def scenario() -> None:
        server, port = await _serving(raw)
        origin = Origin(f"http://127.0.0.1:{port}/mcp")
        try:
            answer = await origin.open("POST", {}, json.dumps(_message(1)).encode())
            assert answer.status == 200
            await answer.aclose()  # the rest of its body still on the way
            again = await origin.open("POST", {}, json.dumps(_message(2)).encode())
            body = b"".join([chunk async for chunk in again.chunks()])
            await again.aclose()
            assert json.loads(body)["id"] == 2
        finally:
            await origin.aclose()
            server.close()

    asyncio.run(scenario())
    assert raw.connections == 2


def test_a_program_with_its_own_httpx_client_or_auth_goes_through_httpx() -> None:
    import httpx

    async def scenario() -> tuple[str, str, str]:
        own = HttpTransport("http://127.0.0.1:9/mcp", client=httpx.AsyncClient())
        auth = HttpTransport("http://127.0.0.1:9/mcp", auth=httpx.BasicAuth("a", "b"))
        lean = HttpTransport("http://127.0.0.1:9/mcp")
        kinds = (type(own.wire).__name__, type(auth.wire).__name__, type(lean.wire).__name__)
        for transport in (own, auth, lean):
            await transport.close()
        return kinds

    assert asyncio.run(scenario()) == ("HttpxWire", "HttpxWire", "Origin")


def test_a_proxy_named_by_the_environment_is_followed_through_httpx(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "bypassed.example")
    proxied = HttpTransport("http://server.example/mcp")
    bypassed = HttpTransport("http://bypassed.example/mcp")
    secure = HttpTransport("https://server.example/mcp")  # HTTP_PROXY is for http:// only
    assert type(proxied.wire).__name__ == "HttpxWire"
    assert type(bypassed.wire).__name__ == "Origin"
    assert type(secure.wire).__name__ == "Origin"
    for transport in (proxied, bypassed, secure):
        asyncio.run(transport.close())


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_tls_checks_the_servers_certificate(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    serving = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    serving.load_cert_chain(cert, key)
    trusting = ssl.create_default_context(cafile=str(cert))

    async def scenario() -> tuple[Any, TransportError]:
        raw = Raw(_answer_json)
        server, port = await _serving(raw, serving)
        url = f"https://127.0.0.1:{port}/mcp"
        trusted = HttpTransport(url, tls=trusting)
        unknown = HttpTransport(url)  # the default roots do not know this certificate
        try:
            answers = [await trusted.request(_message(rid), {}, print) for rid in (1, 2)]
            with pytest.raises(TransportError) as refused:
                await unknown.request(_message(3), {}, print)
        finally:
            await trusted.close()
            await unknown.close()
            server.close()
        # The trusted client's one, reused; the refused handshake never reached the handler.
        assert raw.connections == 1
        return answers, refused.value

    answers, refused = asyncio.run(scenario())
    assert [a["id"] for a in answers] == [1, 2]
    assert "CERTIFICATE_VERIFY_FAILED" in str(refused)
