"""What one HTTP peer can make the server spend, bounded: each input is one that once
cost seconds of CPU or was let through, sent to a real ``snodo run`` process."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from snodo.core.http_headers import request_headers
from tests.support.processes import serving, snodo_run

FEW_STREAMS = "tests/hardening/server.py:few_streams"

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}


def raw_post(url: str, head_lines: bytes, body: bytes, timeout: float = 30) -> tuple[int, bytes]:
    """POST with the header lines exactly as given; the status and the body."""
    parts = urlsplit(url)
    assert parts.port is not None
    head = (
        f"POST {parts.path} HTTP/1.1\r\nhost: localhost\r\n"
        "content-type: application/json\r\naccept: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", parts.port), timeout=timeout) as sock:
        sock.sendall(head + head_lines + b"\r\n" + body)
        received = bytearray()
        while chunk := sock.recv(65536):
            received += chunk
    head_text, _, body_text = bytes(received).partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head_text.lower():
        body_text = _dechunk(body_text)
    return int(head_text.split()[1]), body_text


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return bytes(out)
        out += data[:size]
        data = data[size + 2 :]


def mirrored(method: str, params: dict[str, Any]) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **request_headers(method, params, VERSION),
    }


def post(url: str, method: str, params: dict[str, Any], **headers: str) -> httpx.Response:
    params = {"_meta": META, **params}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(url, json=body, headers={**mirrored(method, params), **headers}, timeout=10)


def still_serving(url: str) -> None:
    response = post(url, "tools/call", {"name": "invocation_count"})
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "complete"


def test_many_repeated_header_lines_are_refused_with_431(http_url: str) -> None:
    status, body = raw_post(http_url, b"a: b\r\n" * 1000, b"{}")
    assert (status, body) == (431, b"too many header lines")
    # 200,000 of them (1.2 MB) pass snodo run's head cap (64 KiB) first: 431 there, or
    # a reset when the server closes with the rest of the head unread.
    try:
        status, body = raw_post(http_url, b"a: b\r\n" * 200_000, b"{}")
    except (ConnectionResetError, BrokenPipeError):
        pass
    else:
        assert (status, body) == (431, b"request head too large")
    still_serving(http_url)


def test_repeated_headers_below_the_limit_are_joined(http_url: str) -> None:
    params = {"_meta": META, "name": "invocation_count"}
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
    lines = "".join(
        f"{k}: {v}\r\n"
        for k, v in mirrored("tools/call", params).items()
        if k not in ("content-type", "accept")
    )
    status, body = raw_post(
        http_url, (lines + "x-filler: 1\r\n" * 80).encode(), json.dumps(message).encode()
    )
    assert status == 200, body
    # Mcp-Method twice is joined into "tools/call, tools/call": no longer the body's method.
    status, body = raw_post(
        http_url, (lines + "mcp-method: tools/call\r\n").encode(), json.dumps(message).encode()
    )
    assert status == 400
    assert json.loads(body)["error"]["code"] == -32020


def test_a_body_of_many_small_containers_is_a_parse_error(http_url: str) -> None:
    body = b"[" + b",".join([b"[]"] * (4 * 1024 * 1024 // 3 - 1)) + b"]"
    assert len(body) < 4 * 1024 * 1024
    status, answer = raw_post(http_url, b"", body)
    assert status == 400
    assert json.loads(answer) == {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error: JSON holds too many values"},
    }
    still_serving(http_url)


def test_a_number_too_large_for_a_double_is_a_parse_error(http_url: str) -> None:
    meta = json.dumps(META)
    for method, params in (
        ("resources/read", '"uri":"data://x","n":1e400'),
        ("tools/call", '"name":"guarded","arguments":{"note":-1E+400}'),
    ):
        body = (
            f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"_meta":{meta},{params}}}}}'
        )
        response = httpx.post(http_url, content=body, headers=mirrored(method, {}), timeout=10)
        assert response.status_code == 400
        assert response.json() == {
            "jsonrpc": "2.0",
            "error": {"code": -32700, "message": "Parse error: invalid JSON"},
        }
    still_serving(http_url)


def test_host_with_a_bracketed_prefix_is_refused(http_url: str) -> None:
    for host in ("[::1].evil.com", "[::1]x", "localhost:80@evil.com", "localhost:8o", "[::1"):
        response = post(http_url, "tools/call", {"name": "invocation_count"}, host=host)
        assert response.status_code == 421, host
    for host in ("localhost", "LOCALHOST:8000", "[::1]:8000", "127.0.0.1"):
        response = post(http_url, "tools/call", {"name": "invocation_count"}, host=host)
        assert response.status_code == 200, host


def test_origin_with_userinfo_is_refused(http_url: str) -> None:
    for origin in (
        "http://localhost:80@evil.com",
        "http://user@localhost",
        "http://[::1].evil.com",
        "http://localhost:80/x",
    ):
        response = post(http_url, "tools/call", {"name": "invocation_count"}, origin=origin)
        assert response.status_code == 403, origin
    response = post(
        http_url, "tools/call", {"name": "invocation_count"}, origin="http://localhost:3000"
    )
    assert response.status_code == 200


def listen(url: str, notifications: dict[str, Any]) -> httpx.Response:
    return post(url, "subscriptions/listen", {"notifications": notifications})


def test_too_many_resource_subscriptions_are_refused(http_url: str) -> None:
    uris = [f"file:///{i}" for i in range(257)]
    response = listen(http_url, {"resourceSubscriptions": uris})
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": -32602,
        "message": "Invalid params: at most 256 resourceSubscriptions",
    }
    response = listen(http_url, {"resourceSubscriptions": ["file:///" + "a" * 2048]})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


def test_three_hundred_thousand_resource_subscriptions_cost_a_scan(http_url: str) -> None:
    uris = ",".join(f'"r:{i}"' for i in range(300_000))
    meta = json.dumps(META)
    body = (
        '{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":'
        + meta
        + ',"notifications":{"resourceSubscriptions":['
        + uris
        + "]}}}"
    ).encode()
    assert len(body) < 4 * 1024 * 1024
    status, answer = raw_post(http_url, b"", body)
    assert status == 400
    assert json.loads(answer)["error"] == {
        "code": -32700,
        "message": "Parse error: JSON holds too many values",
    }
    still_serving(http_url)


LISTEN_PARAMS = {"_meta": META, "notifications": {"toolsListChanged": True}}


def listen_message(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "subscriptions/listen",
        "params": LISTEN_PARAMS,
    }


def listen_head(request_id: int) -> bytes:
    body = json.dumps(listen_message(request_id)).encode()
    headers = mirrored("subscriptions/listen", LISTEN_PARAMS)
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (
        f"POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-length: {len(body)}\r\n{lines}\r\n"
    ).encode() + body


def test_open_listen_streams_are_capped_per_process() -> None:
    with (
        serving(lambda port: snodo_run(FEW_STREAMS, "http", "--port", str(port))) as server,
        contextlib.ExitStack() as streams,
    ):
        port = server.port
        held = []
        for request_id in (1, 2):
            sock = streams.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            sock.sendall(listen_head(request_id))
            first = sock.recv(65536)
            while b"acknowledged" not in first:
                first += sock.recv(65536)
            held.append(sock)
        url = f"http://127.0.0.1:{port}/mcp"
        refused = listen(url, {"toolsListChanged": True})
        assert refused.json()["error"] == {
            "code": -32603,
            "message": "Too many open subscriptions/listen streams; try again later",
        }
        held.pop().close()  # one stream ends: its place is free again
        for _ in range(50):
            with httpx.stream(
                "POST",
                url,
                json=listen_message(9),
                headers=mirrored("subscriptions/listen", LISTEN_PARAMS),
                timeout=10,
            ) as again:
                if again.headers["content-type"] == "text/event-stream":
                    break
            time.sleep(0.1)
        else:
            pytest.fail("the cap stayed full after a stream closed")
