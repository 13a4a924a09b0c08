"""Legacy sessions on any worker: two ``snodo run`` workers sharing a redis-server,
behind a balancer that sends every request to the other worker (tests/support/
round_robin.py). A session opened on one is answered by both; a bridged elicitation's
answer lands on the worker that did not ask and reaches the one that did; a GET stream
held by one worker hears a resource update raised on the other; a worker killed mid-
session leaves the session to the other; Redis down is a 503, and Redis back is service
back. Redis is this module's own (it is stopped and started again here).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.client import Client
from snodo.client.transports import HttpRefused
from tests.replay.conftest import answers_ping
from tests.support.legacy_resume import lose_and_resume
from tests.support.legacy_sdk import legacy_sdk_python
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, snodo_run, stop
from tests.support.round_robin import RoundRobin

TARGET = "tests/legacy/shared_server.py:server"
HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
"""A raw legacy client's ``initialize`` and the headers its requests carry."""


class Redis:
    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (CI: apt-get install redis-server)")
        self.binary = binary
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *(self.binary, "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--loglevel", "warning"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while not answers_ping(self.port):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None


@dataclass
class Worker:
    name: str
    port: int
    process: subprocess.Popen[bytes]


def start_worker(name: str, redis: Redis, target: str = TARGET, **extra: str) -> Worker:
    port = free_port()
    env = {
        **os.environ,
        **extra,
        "SNODO_LEGACY_STORE": redis.url,
        "SNODO_NOTIFY": redis.url,
        "SNODO_REPLAY_GUARD": redis.url,  # examples/preferences.py: one-time across workers
        "SNODO_WORKER": name,
        "SNODO_STATE_SECRET": "5e" * 32,  # MRTR retries of modern clients, on any worker
    }
    process = subprocess.Popen(
        snodo_run(target, "http", "--port", str(port)),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert accepting(process, port), f"worker {name} did not start"
    return Worker(name, port, process)


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Redis, list[Worker], RoundRobin]]:
    redis = Redis()
    redis.start()
    workers = [start_worker(name, redis) for name in ("a", "b")]
    balancer = RoundRobin([w.port for w in workers]).start()
    try:
        yield redis, workers, balancer
    finally:
        balancer.stop()
        for worker in workers:
            stop(worker.process)
        redis.stop()


def text(result: Any) -> str:
    return str(result.content[0].text)


def test_every_request_of_a_session_on_the_other_worker(
    cluster: tuple[Redis, list[Worker], RoundRobin],
) -> None:
    balancer = cluster[2]
    asked: list[dict[str, Any]] = []

    def city(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"city": "Oslo"}}

    async def main() -> list[str]:
        async with Client.http(balancer.url, era="legacy", elicitation=city) as client:
            names = [text(await client.call_tool("whoami")) for _ in range(4)]
            weather = text(await client.call_tool("weather"))
            assert weather.startswith("sunny in Oslo (worker ")
            return [*names, weather]

    start = len(balancer.routed)
    names = asyncio.run(asyncio.wait_for(main(), 30))
    assert sorted(set(names[:4])) == ["a", "b"], "one session, answered by both workers"
    assert [p["message"] for p in asked] == ["Which city?"]
    routed = balancer.routed[start:]
    answer = next(i for i, (what, _) in enumerate(routed) if what == "POST response")
    call = max(i for i, (what, _) in enumerate(routed[:answer]) if what == "POST tools/call")
    assert routed[call][1] != routed[answer][1], "the answer landed on the other worker"


def test_a_get_stream_on_one_worker_hears_updates_raised_on_the_other(
    cluster: tuple[Redis, list[Worker], RoundRobin],
) -> None:
    _, _, balancer = cluster

    async def main() -> tuple[set[str], list[str]]:
        async with Client.http(balancer.url, era="legacy") as client:
            listening = client.listen(resourceSubscriptions=["note://shared"])
            heard: list[str] = []
            raisers: set[str] = set()
            async with contextlib.aclosing(listening) as stream:  # type: ignore[type-var]
                await anext(stream)  # acknowledged: subscribed, GET stream open
                for _ in range(4):
                    raisers.add(text(await client.call_tool("touch", {"uri": "note://shared"})))
                    note = await asyncio.wait_for(anext(stream), 10)
                    heard.append(note["params"]["uri"])
            return raisers, heard

    raisers, heard = asyncio.run(asyncio.wait_for(main(), 40))
    assert raisers == {"a", "b"}
    assert heard == ["note://shared"] * 4, "each update once, whichever worker raised it"


def test_a_cancellation_posted_to_the_other_worker_cancels_the_call(
    cluster: tuple[Redis, list[Worker], RoundRobin],
) -> None:
    """A legacy session's call runs on worker a; the client's notifications/cancelled
    lands on worker b, which does not run it: a cancels it (its stream ends with no
    answer, and a says it cancelled that call)."""
    _, workers, _ = cluster
    at_a, at_b = (f"http://127.0.0.1:{w.port}/mcp" for w in workers)

    def call(request_id: str, name: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": {}}
        if meta:
            params["_meta"] = meta
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    async def scenario() -> tuple[list[str], str]:
        async with httpx.AsyncClient(timeout=60) as http:
            opened = await http.post(at_a, json=INIT, headers=HEADERS)
            session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
            lines: list[str] = []
            started = asyncio.Event()

            async def linger() -> None:
                body = call("slow-1", "linger", {"progressToken": "t"})
                async with http.stream("POST", at_a, json=body, headers=session) as answer:
                    async for line in answer.aiter_lines():
                        lines.append(line)
                        if line.startswith("data:") and "notifications/progress" in line:
                            started.set()

            running = asyncio.ensure_future(linger())
            await started.wait()
            cancel = {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "slow-1", "reason": "the user gave up"},
            }
            assert (await http.post(at_b, json=cancel, headers=session)).status_code == 202
            await running  # a's stream ends: the call was cancelled there
            said = await http.post(at_a, json=call("ask-2", "cancelled_here"), headers=session)
            text = said.json()["result"]["content"][0]["text"]
            return lines, text

    lines, text = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert text == "a: slow-1"
    assert not [line for line in lines if line.startswith("data:") and '"result"' in line]


def test_a_killed_worker_leaves_the_session_to_the_other_and_redis_down_is_503(
    cluster: tuple[Redis, list[Worker], RoundRobin],
) -> None:
    redis, workers, balancer = cluster

    async def main() -> None:
        async with Client.http(balancer.url, era="legacy") as client:
            assert text(await client.call_tool("whoami")) in ("a", "b")
            workers[0].process.kill()
            workers[0].process.wait()
            names = {text(await client.call_tool("whoami")) for _ in range(3)}
            assert names == {"b"}
            redis.stop()
            started = time.monotonic()
            with pytest.raises(HttpRefused) as refused:
                await client.call_tool("whoami")
            assert refused.value.status == 503
            assert time.monotonic() - started < 5, "a store that is down fails fast"
            redis.start()
            await asyncio.sleep(0.5)
            # The records went with the old Redis: a new session, transparently.
            assert text(await client.call_tool("whoami")) == "b"

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        workers[0] = start_worker("a", redis)
        balancer.backends[0] = workers[0].port


def test_503_carries_a_json_rpc_error(cluster: tuple[Redis, list[Worker], RoundRobin]) -> None:
    redis, workers, _ = cluster
    url = f"http://127.0.0.1:{workers[1].port}/mcp"
    with httpx.Client(timeout=10) as http:
        session = http.post(url, json=INIT, headers=HEADERS).headers["mcp-session-id"]
        redis.stop()
        try:
            ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
            answer = http.post(url, json=ping, headers={**HEADERS, "mcp-session-id": session})
        finally:
            redis.start()
    assert answer.status_code == 503
    assert answer.json()["error"]["message"].startswith("Service unavailable")


@pytest.fixture(scope="module")
def preferences() -> Iterator[RoundRobin]:
    """examples/preferences.py on two workers sharing Redis, behind the balancer."""
    redis = Redis()
    redis.start()
    workers = [start_worker(name, redis, "examples/preferences.py:server") for name in "ab"]
    balancer = RoundRobin([w.port for w in workers]).start()
    try:
        yield balancer
    finally:
        balancer.stop()
        for worker in workers:
            stop(worker.process)
        redis.stop()


def answers_across_workers(balancer: RoundRobin, start: int) -> int:
    """How many of the client's answers landed on another worker than the call before."""
    routed = balancer.routed[start:]
    crossed = 0
    for index, (what, port) in enumerate(routed):
        if what == "POST response":
            calls = [p for w, p in routed[:index] if w.startswith("POST ") and w != "POST response"]
            crossed += bool(calls) and calls[-1] != port
    return crossed


def test_the_official_python_sdk_through_the_balancer(preferences: RoundRobin) -> None:
    """PyPI mcp 1.30.0 (tests/legacy/sdk_client.py): every flow of the example, its
    bridged questions answered on the worker that did not ask."""
    from tests.legacy.test_legacy_sdk import CLIENT, _check

    start = len(preferences.routed)
    run = subprocess.run(
        [str(legacy_sdk_python()), CLIENT, "http", preferences.url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["session"] is True
    _check(report)
    assert answers_across_workers(preferences, start) >= 5


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_official_typescript_client_through_the_balancer(preferences: RoundRobin) -> None:
    """interop/official_client/check_mrtr.mjs over HTTP only, pinned to 2026-07-28 and
    with its default (legacy) negotiation, every request to the other worker."""
    client_dir = ROOT / "interop" / "official_client"
    if not (client_dir / "node_modules").is_dir():
        subprocess.run(["bash", str(ROOT / "scripts" / "interop"), "typed"], cwd=ROOT, check=False)
    start = len(preferences.routed)
    env = {
        **os.environ,
        "SNODO_PYTHON": sys.executable,
        "SNODO_TRANSPORTS": "http",
        "SNODO_HTTP_URL": preferences.url,
    }
    run = subprocess.run(
        ["node", str(client_dir / "check_mrtr.mjs")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0 and summary.endswith(" 0 failed"), run.stdout + run.stderr
    assert answers_across_workers(preferences, start) >= 5


def test_a_lost_stream_is_resumed_on_the_other_worker(
    cluster: tuple[Redis, list[Worker], RoundRobin],
) -> None:
    """The question comes on one worker's stream; the answer and the resuming GET land
    on the other, which replays the rest from Redis while the first finishes the call."""
    balancer = cluster[2]
    start = len(balancer.routed)
    seen = lose_and_resume(balancer.url, pings=1)
    assert seen["question"] == "Which city?" and seen["resume_status"] == 200
    [(event_id, answer)] = seen["resumed"]
    assert event_id.rsplit(".", 1)[0] == seen["ids"][0].rsplit(".", 1)[0]
    assert answer["result"]["content"][0]["text"].startswith("sunny in Oslo")
    routed = balancer.routed[start:]
    call = next(port for what, port in routed if what == "POST tools/call")
    resume = next(port for what, port in routed[3:] if what == "GET")
    assert call != resume, "resumed on the worker that did not run the call"


NGINX = shutil.which("nginx")


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")
def test_behind_the_documented_round_robin_nginx(
    cluster: tuple[Redis, list[Worker], RoundRobin], tmp_path: Path
) -> None:
    """docs/nginx-round-robin.conf in front of the two workers: one session's requests
    land on both, a bridged question is answered, a lost stream is resumed."""
    assert NGINX is not None
    _, workers, _ = cluster
    listen = free_port()
    site = (ROOT / "docs" / "nginx-round-robin.conf").read_text()
    for old, new in (
        ("127.0.0.1:8080", f"127.0.0.1:{listen}"),
        ("127.0.0.1:8001", f"127.0.0.1:{workers[0].port}"),
        ("127.0.0.1:8002", f"127.0.0.1:{workers[1].port}"),
    ):
        assert old in site
        site = site.replace(old, new)
    (tmp_path / "site.conf").write_text(site)
    temp = " ".join(
        f"{kind}_temp_path {tmp_path}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    main = tmp_path / "nginx.conf"
    main.write_text(
        f"daemon off;\nworker_processes 1;\npid {tmp_path}/nginx.pid;\n"
        f"error_log {tmp_path}/error.log;\nevents {{ worker_connections 64; }}\n"
        f"http {{ access_log off; {temp} include {tmp_path}/site.conf; }}\n"
    )
    proxy = subprocess.Popen(
        [NGINX, "-p", str(tmp_path), "-e", str(tmp_path / "error.log"), "-c", str(main)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{listen}/mcp"

    def city(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"city": "Bergen"}}

    async def main() -> set[str]:
        async with Client.http(url, era="legacy", elicitation=city) as client:
            names = {text(await client.call_tool("whoami")) for _ in range(6)}
            for _ in range(3):
                assert text(await client.call_tool("weather")).startswith("sunny in Bergen")
            return names

    try:
        assert accepting(proxy, listen), (tmp_path / "error.log").read_text()
        assert asyncio.run(asyncio.wait_for(main(), 30)) == {"a", "b"}
        seen = lose_and_resume(url)
        assert seen["resumed"][-1][1]["result"]["content"][0]["text"].startswith("sunny in Oslo")
    finally:
        stop(proxy)
