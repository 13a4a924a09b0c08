"""What ``snodo run`` answers beside the MCP endpoint, against real processes: CORS for
a listed browser origin (preflight, answers, the DNS-rebinding 403 for any other), the
liveness and readiness probes (a real redis-server stopped and started under a running
server), and a server's own routes."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from snodo.core.http_headers import request_headers
from tests.replay.conftest import START_TIMEOUT, answers_ping
from tests.support.processes import free_port, serving, snodo_run, stop
from tests.support.wire import VERSION, request

TARGET = "tests/transports/beside_server.py:server"
APP = "http://app.example"
JSON_BOTH = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
    return request("tools/call", {"name": name, "arguments": arguments})


def headers_for(message: dict[str, object], **extra: str) -> dict[str, str]:
    params = message["params"]
    assert isinstance(params, dict)
    return JSON_BOTH | request_headers(str(message["method"]), params, VERSION) | extra


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    def command(port: int) -> list[str]:
        return snodo_run(TARGET, "http", "--port", str(port), "--cors-origin", APP)

    with serving(command) as running:
        yield running.base


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def test_a_preflight_from_the_listed_origin(base: str, http: httpx.Client) -> None:
    asked = "content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region"
    answer = http.options(
        f"{base}/mcp",
        headers={
            "origin": APP,
            "access-control-request-method": "POST",
            "access-control-request-headers": asked,
        },
    )
    assert answer.status_code == 204
    assert answer.headers["access-control-allow-origin"] == APP
    assert answer.headers["access-control-allow-methods"] == "POST, GET, DELETE, OPTIONS"
    allowed = answer.headers["access-control-allow-headers"].split(", ")
    assert allowed == [
        "content-type",
        "accept",
        "authorization",
        "dpop",
        "mcp-protocol-version",
        "mcp-session-id",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "traceparent",
        "tracestate",
        "mcp-param-region",
    ]
    assert answer.headers["vary"] == "origin"


def test_answers_to_the_listed_origin_carry_cors_headers(base: str, http: httpx.Client) -> None:
    message = call("where", {"region": "eu"})
    region = {"Mcp-Param-Region": "eu"}
    answer = http.post(
        f"{base}/mcp", json=message, headers=headers_for(message, origin=APP) | region
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["result"]["content"][0]["text"] == "in eu"
    assert answer.headers["access-control-allow-origin"] == APP
    exposed = answer.headers["access-control-expose-headers"]
    assert exposed == (
        "mcp-session-id, mcp-protocol-version, www-authenticate, retry-after, dpop-nonce"
    )
    # A refusal too: the browser must be able to read why.
    wrong = headers_for(message, origin=APP) | {"Mcp-Param-Region": "us"}
    refused = http.post(f"{base}/mcp", json=message, headers=wrong)
    assert refused.status_code == 400
    assert refused.headers["access-control-allow-origin"] == APP


def test_without_an_origin_nothing_changes(base: str, http: httpx.Client) -> None:
    message = call("echo", {"text": "hi"})
    answer = http.post(f"{base}/mcp", json=message, headers=headers_for(message))
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers
    assert http.options(f"{base}/mcp").status_code == 405


@pytest.mark.parametrize("origin", ["http://evil.example", "http://app.example:8080"])
def test_another_origin_is_refused(base: str, http: httpx.Client, origin: str) -> None:
    preflight = http.options(
        f"{base}/mcp", headers={"origin": origin, "access-control-request-method": "POST"}
    )
    assert preflight.status_code == 403
    assert "access-control-allow-origin" not in preflight.headers
    message = call("echo", {"text": "hi"})
    answer = http.post(f"{base}/mcp", json=message, headers=headers_for(message, origin=origin))
    assert answer.status_code == 403
    assert "access-control-allow-origin" not in answer.headers


def test_liveness(base: str, http: httpx.Client) -> None:
    answer = http.get(f"{base}/healthz")
    assert (answer.status_code, answer.json()) == (200, {"status": "ok"})
    assert http.head(f"{base}/healthz").status_code == 200
    assert http.post(f"{base}/healthz").status_code == 405
    # Host still checked: a rebinding page cannot probe it either.
    assert http.get(f"{base}/healthz", headers={"host": "evil.example"}).status_code == 421


def test_readiness_without_redis_is_ready(base: str, http: httpx.Client) -> None:
    answer = http.get(f"{base}/readyz")
    assert (answer.status_code, answer.json()) == (200, {"status": "ready"})


def test_the_servers_own_routes(base: str, http: httpx.Client) -> None:
    answer = http.get(f"{base}/version?x=1")
    assert (answer.status_code, answer.json()) == (200, {"name": "beside", "query": "x=1"})
    hooked = http.post(f"{base}/hook", content=b"ping")
    assert (hooked.status_code, hooked.text, hooked.headers["x-hook"]) == (201, "got ping", "yes")
    refused = http.get(f"{base}/hook")
    assert (refused.status_code, refused.headers["allow"]) == (405, "POST")
    assert http.get(f"{base}/elsewhere").status_code == 404


def test_probe_paths_are_configurable(http: httpx.Client) -> None:
    def command(port: int) -> list[str]:
        paths = ["--health-path", "/live", "--ready-path", ""]
        return snodo_run(TARGET, "http", "--port", str(port), *paths)

    with serving(command) as running:
        assert http.get(f"{running.base}/live").status_code == 200
        assert http.get(f"{running.base}/healthz").status_code == 404
        assert http.get(f"{running.base}/readyz").status_code == 404


# -- readiness with Redis -------------------------------------------------------------------


class Redis:
    """A redis-server on a fixed loopback port, started and stopped at will; with a
    ``password``, one that asks for it."""

    def __init__(self, binary: str, port: int, workdir: Path, password: str = "") -> None:
        self.binary, self.port, self.workdir = binary, port, workdir
        self.password = password
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *(self.binary, "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--dir", str(self.workdir)),
                *(("--requirepass", self.password) if self.password else ()),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while not self.answers():
            assert self.process.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)

    def answers(self) -> bool:
        if not self.password:
            return answers_ping(self.port)
        with (
            contextlib.suppress(OSError),
            socket.create_connection(("127.0.0.1", self.port), 1) as sock,
        ):
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"-NOAUTH")
        return False

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


def test_readiness_follows_redis(http: httpx.Client, tmp_path: Path) -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (CI: apt-get install redis-server)")
    # The password in the URL's query: nothing of the URL may reach the probe's answer.
    redis = Redis(binary, free_port(), tmp_path, password="hunter2")
    url = f"redis://127.0.0.1:{redis.port}/0?password=hunter2"

    def command(port: int) -> list[str]:
        return ["env", f"TEST_REDIS={url}", *snodo_run(TARGET, "http", "--port", str(port))]

    try:
        with serving(command) as running:
            stopped = http.get(f"{running.base}/readyz")
            assert stopped.status_code == 503
            assert stopped.json() == {
                "status": "not ready",
                "failed": ["replay guard", "task store"],
            }
            for leaked in ("hunter2", str(redis.port), "127.0.0.1", "redis"):
                assert leaked not in stopped.text
            assert http.get(f"{running.base}/healthz").status_code == 200  # alive all along
            redis.start()
            assert http.get(f"{running.base}/readyz").json() == {"status": "ready"}
            redis.stop()
            assert http.get(f"{running.base}/readyz").status_code == 503
    finally:
        redis.stop()


def test_workers_serve_the_same(http: httpx.Client) -> None:
    """With --workers each process builds its app from the environment: the same CORS
    origins and probe paths."""

    def command(port: int) -> list[str]:
        # Only modern traffic here: the workers need not share legacy sessions.
        extra = ["--workers", "2", "--unshared-legacy-sessions", "--cors-origin", APP]
        extra += ["--health-path", "/live"]
        return snodo_run(TARGET, "http", "--port", str(port), *extra)

    with serving(command) as running:
        preflight = http.options(
            f"{running.base}/mcp", headers={"origin": APP, "access-control-request-method": "POST"}
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == APP
        assert http.get(f"{running.base}/live").json() == {"status": "ok"}
        assert http.get(f"{running.base}/readyz").json() == {"status": "ready"}
