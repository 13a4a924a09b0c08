"""What `snodo run` asks of uvicorn, and the reverse proxy the deployment notes
prescribe (docs/nginx-snodo.conf), each in front of a real server on loopback."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, serving, snodo_run, stop

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
}
SITE = ROOT / "docs" / "nginx-snodo.conf"


def message(method: str, params: dict[str, Any], id: int = 1) -> tuple[bytes, dict[str, str]]:
    params = {"_meta": META, **params}
    body = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **request_headers(method, params, VERSION),
    }
    return httpx.Request("POST", "http://x", json=body).content, headers


def count(url: str, **extra: str) -> httpx.Response:
    body, headers = message("tools/call", {"name": "invocation_count"})
    return httpx.post(url, content=body, headers={**headers, **extra}, timeout=10)


def head_bytes(body: bytes, headers: dict[str, str], port: int, path: str = "/mcp") -> bytes:
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (
        f"POST {path} HTTP/1.1\r\nhost: localhost\r\ncontent-length: {len(body)}\r\n{lines}\r\n"
    ).encode() + body


def exchange(port: int, data: bytes) -> bytes:
    """Send raw bytes and read until the server closes: b"" if it reset the connection
    (a server that closes with unread input may do that instead of answering)."""
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(data)
            while chunk := sock.recv(65536):
                received += chunk
        except (ConnectionResetError, BrokenPipeError):
            return received
    return received


TARGET = "tests/hardening/server.py:server"


@contextlib.contextmanager
def snodo(*extra: str) -> Iterator[int]:
    """``snodo run`` serving the hardening target over HTTP with ``extra`` options."""
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port), *extra)) as server:
        yield server.port


def test_h11_refuses_a_request_head_over_its_limit() -> None:
    with snodo("--http", "h11", "--h11-max-incomplete-event-size", "4096") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert count(url, x_padding="a" * 2000).status_code == 200
        # h11 counts what it holds while a head is incomplete: a head that arrives in
        # one read is parsed whole, a longer one is refused once the buffer passes 4096.
        body, headers = message("tools/call", {"name": "invocation_count"})
        answer = exchange(port, head_bytes(body, {**headers, "x-padding": "a" * 200_000}, port))
        assert answer.startswith(b"HTTP/1.1 400") or answer == b"", answer[:100]
        assert count(url).status_code == 200


def test_idle_keep_alive_connections_are_closed() -> None:
    with snodo("--timeout-keep-alive", "0.5") as port:
        body, headers = message("tools/call", {"name": "invocation_count"})
        with socket.create_connection(("127.0.0.1", port), timeout=4) as sock:
            sock.sendall(head_bytes(body, headers, port))
            received = b""
            while b'"resultType"' not in received:
                received += sock.recv(65536)
            assert received.startswith(b"HTTP/1.1 200")
            # Idle from here: the server closes the connection (recv returns b"") well
            # before the 4 s socket timeout, which uvicorn's default of 5 s would hit.
            while chunk := sock.recv(65536):
                assert b"HTTP/1.1" not in chunk


def test_connections_beyond_the_concurrency_limit_get_503() -> None:
    with snodo("--limit-concurrency", "2") as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert count(url).status_code == 200
        body, headers = message(
            "subscriptions/listen", {"notifications": {"toolsListChanged": True}}
        )
        with socket.create_connection(("127.0.0.1", port), timeout=10) as stream:
            stream.sendall(head_bytes(body, headers, port))
            assert stream.recv(65536).startswith(b"HTTP/1.1 200")  # held open
            assert count(url).status_code == 503
        for _ in range(50):  # the stream's connection closes shortly after the socket
            if count(url).status_code == 200:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the server kept refusing after the stream closed")


NGINX = shutil.which("nginx")


def nginx_config(tmp: Path, listen: int, upstream: int) -> Path:
    site = SITE.read_text()
    assert "127.0.0.1:8080" in site and "127.0.0.1:8000" in site
    site = site.replace("127.0.0.1:8080", f"127.0.0.1:{listen}")
    site = site.replace("127.0.0.1:8000", f"127.0.0.1:{upstream}")
    (tmp / "snodo.conf").write_text(site)
    temp = " ".join(
        f"{kind}_temp_path {tmp}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = tmp / "nginx.conf"
    main.write_text(
        f"daemon off;\nworker_processes 1;\npid {tmp}/nginx.pid;\nerror_log {tmp}/error.log;\n"
        "events { worker_connections 64; }\n"
        f"http {{ access_log off; {temp} include {tmp}/snodo.conf; }}\n"
    )
    return main


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")
def test_the_documented_nginx_site_passes_requests_and_bounds_headers(tmp_path: Path) -> None:
    assert NGINX is not None
    with snodo() as upstream:
        listen = free_port()
        config = nginx_config(tmp_path, listen, upstream)
        proxy = subprocess.Popen(
            [NGINX, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert accepting(proxy, listen), (tmp_path / "error.log").read_text()
            url = f"http://127.0.0.1:{listen}/mcp"
            passed = count(url, host="localhost")
            assert passed.status_code == 200
            assert passed.json()["result"]["resultType"] == "complete"
            refused = count(url, host="localhost", x_padding="a" * 9000)
            assert refused.status_code == 400
            assert b"Header Or Cookie Too Large" in refused.content  # nginx's, not snodo's
            huge = httpx.post(
                url,
                content=b"x" * (5 << 20),
                headers={"content-type": "application/json", "host": "localhost"},
                timeout=30,
            )
            assert huge.status_code == 413
            assert count(url, host="localhost").status_code == 200
        finally:
            stop(proxy)
