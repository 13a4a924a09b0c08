"""Stateless MRTR behind a load balancer: separate worker processes share a keyring
and nothing else; every round of every flow goes to a different worker.

Then the three-step key rotation is rolled across the workers one at a time, and a
worker is killed and restarted, all while flows are in flight: no token is rejected
and no flow fails. A round that finds its worker down is sent to another one, as a
load balancer with health checks would.

Marked slow: worker processes killed and restarted while flows are in flight (about
40 s).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from snodo.core.http_headers import request_headers
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, snodo_run

pytestmark = pytest.mark.slow

A = "a:" + "aa" * 32
B = "b:" + "bb" * 32


class Worker:
    def __init__(self, index: int, keys: str) -> None:
        self.index = index
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.start(keys)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self, keys: str) -> None:
        env = {**os.environ, "SNODO_STATE_KEYS": keys, "SNODO_WORKER": str(self.index)}
        self.process = subprocess.Popen(
            snodo_run("tests/scaleout/server.py:server", "http", "--port", str(self.port)),
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if not accepting(self.process, self.port):
            raise RuntimeError("worker did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self, keys: str) -> None:
        self.stop()
        self.start(keys)


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    pool = [Worker(0, A), Worker(1, A), Worker(2, A)]
    try:
        yield pool
    finally:
        for worker in pool:
            worker.stop()


def _body(flow: int, rid: int, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            },
            "name": "wizard",
            "arguments": {"flow": flow},
            **extra,
        },
    }


class Balancer:
    """Sends each round to the next worker; a worker that is down is skipped."""

    def __init__(self, pool: list[Worker], client: httpx.AsyncClient) -> None:
        self.pool = pool
        self.client = client
        self.turn = 0
        self.rejected = 0
        self.failed = 0
        self.completed = 0
        self.served_by: set[tuple[int, int]] = set()

    async def post(self, body: dict[str, Any]) -> dict[str, Any]:
        params = body["params"]
        headers = {
            "content-type": "application/json",
            **request_headers("tools/call", params, "2026-07-28"),
        }
        for _ in range(len(self.pool) * 20):
            worker = self.pool[self.turn % len(self.pool)]
            self.turn += 1
            try:
                response = await self.client.post(worker.url, json=body, headers=headers)
            except httpx.TransportError:
                await asyncio.sleep(0.01)
                continue
            result: dict[str, Any] = response.json()
            return result
        raise RuntimeError("no worker answered")

    async def flow(self, number: int) -> None:
        rid = number * 10
        first = await self.post(_body(number, rid, {}))
        second = await self.post(
            _body(
                number,
                rid + 1,
                {
                    "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
                    "requestState": first["result"]["requestState"],
                },
            )
        )
        if "error" in second:
            self.rejected += second["error"]["code"] == -32602
            self.failed += 1
            return
        third = await self.post(
            _body(
                number,
                rid + 2,
                {
                    "inputResponses": {"color": {"action": "accept", "content": {"color": "red"}}},
                    "requestState": second["result"]["requestState"],
                },
            )
        )
        if "error" in third:
            self.rejected += third["error"]["code"] == -32602
            self.failed += 1
            return
        if third["result"]["content"][0]["text"] == f"flow {number}: Ada likes red":
            self.completed += 1
        else:
            self.failed += 1

    async def run(
        self, count: int, concurrency: int = 8, until: asyncio.Event | None = None
    ) -> None:
        """``count`` flows; with ``until``, keep starting flows until it is set."""
        numbers = itertools.count() if until is not None else iter(range(count))

        async def lane() -> None:
            for number in numbers:
                if until is not None and until.is_set():
                    return
                await self.flow(number)

        await asyncio.gather(*(lane() for _ in range(concurrency)))


def test_rounds_spread_over_workers_rotation_and_restarts(workers: list[Worker]) -> None:
    async def scenario() -> Balancer:
        async with httpx.AsyncClient(timeout=10) as client:
            balancer = Balancer(workers, client)
            await balancer.run(60)
            assert (balancer.completed, balancer.failed) == (60, 0)

            loop = asyncio.get_running_loop()
            done = asyncio.Event()
            flows = asyncio.ensure_future(balancer.run(0, concurrency=4, until=done))
            await asyncio.sleep(0.1)
            before = balancer.completed
            for keys in (f"{A},{B}", f"{B},{A}"):  # rotation steps 1 and 2
                for worker in workers:  # one node at a time
                    await loop.run_in_executor(None, worker.restart, keys)
                    await asyncio.sleep(0.05)
            done.set()
            await flows
            assert balancer.completed > before + 50, "flows must overlap the rotation"
            assert balancer.rejected == 0 and balancer.failed == 0

            for worker in workers:  # step 3, after the TTL
                await loop.run_in_executor(None, worker.restart, B)
            done = asyncio.Event()
            crash = asyncio.ensure_future(balancer.run(0, concurrency=4, until=done))
            await asyncio.sleep(0.1)
            await loop.run_in_executor(None, workers[1].restart, B)  # killed mid-run
            await asyncio.sleep(0.2)
            done.set()
            await crash
            return balancer

    balancer = asyncio.run(scenario())
    assert balancer.rejected == 0
    assert balancer.failed == 0
    assert balancer.completed > 200
