"""A bounded soak: mixed MRTR flows at concurrency 32 against one HTTP worker, until
SNODO_SOAK_FLOWS flows are done (10,000 by default) or SNODO_SOAK_SECONDS have passed
(120 by default), whichever comes first. Zero errors, and the server's resident memory
grows by less than 10% from the end of the warm-up (the first fifth of the flows) to
the end.

Bounded by a count, so a fast machine stops early and a slow one does the same work;
bounded by a time, so a starved one still stops. Marked slow: 30,000 requests through
httpx, about a minute on the 2-core machine beside the rest of the suite."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from snodo.cli import KEEP_ALIVE_SECONDS
from snodo.core.http_headers import request_headers
from tests.hardening.conftest import TARGET
from tests.support.processes import Serving, serving, snodo_run
from tests.support.wire import meta

FLOWS = int(os.environ.get("SNODO_SOAK_FLOWS", "10000"))
SECONDS = float(os.environ.get("SNODO_SOAK_SECONDS", "120"))
WARM_UP_FLOWS = FLOWS // 5
CONCURRENCY = 32
META = meta({"elicitation": {}})
SERVER_KEEP_ALIVE = 12 * KEEP_ALIVE_SECONDS
"""The soak's server keeps an idle connection 60 s, the client reuses one idle at most
30 s (``CLIENT_KEEP_ALIVE``): the keep-alive race (a reused connection closed by the
server at that moment) would take a lane starved for half a minute."""
CLIENT_KEEP_ALIVE = SERVER_KEEP_ALIVE / 2
"""Longer than any lane waits between two requests, so that the client's pool never
closes a connection for its age during the run. httpcore's pool (1.0.9) can close a
connection it has just handed to a waiting request, when the connection's keep-alive
ends in between (encode/httpcore#1110): the request then reads its own closed socket
(``httpx.ReadError`` from anyio's ``ClosedResourceError``). At 1 s, on a machine busy
enough that a lane waits that long for the loop, it did twice in 17,600 requests; at
1 ms it does dozens of times a minute; the server never saw either."""
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def http_server() -> Iterator[Serving]:
    """``snodo run`` serving the hardening target, keeping idle connections long."""
    keep_alive = ("--timeout-keep-alive", str(SERVER_KEEP_ALIVE))
    with serving(lambda port: snodo_run(TARGET, "http", "--port", str(port), *keep_alive)) as up:
        yield up


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def _post(
    client: httpx.AsyncClient, url: str, method: str, params: dict[str, Any], rid: int
) -> dict[str, Any]:
    params = {"_meta": META, **params}
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **request_headers(method, params, "2026-07-28"),
    }
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    response = await client.post(url, json=body, headers=headers)
    result: dict[str, Any] = response.json()
    return result


class Quota:
    """The flows the lanes share: each takes one until the count or the time runs out."""

    def __init__(self, flows: int, seconds: float, warm_up: int) -> None:
        self.left = flows
        self.deadline = time.monotonic() + seconds
        self.warm_up = warm_up
        self.warmed = asyncio.Event()

    def take(self) -> bool:
        if self.left <= 0 or time.monotonic() >= self.deadline:
            return False
        self.left -= 1
        return True

    def done(self, tally: Counter[str]) -> None:
        if tally["flows"] + tally["errors"] >= self.warm_up:
            self.warmed.set()


async def lane(
    client: httpx.AsyncClient, url: str, quota: Quota, tally: Counter[str], n: int
) -> None:
    rid = n * 1_000_000
    while quota.take():
        rid += 3
        try:
            await flow(client, url, tally, rid)
        except Exception as exc:  # every failure is tallied, and shown by the assertion
            # Counted, and the lane goes on: a lane that raised would leave the others
            # running on the pool's sockets while the client closes (their unclosed
            # sockets' ResourceWarnings then fail whichever test runs when they are
            # collected).
            tally[f"errors: {type(exc).__name__}: {exc}"] += 1
            tally["errors"] += 1
        quota.done(tally)


async def flow(client: httpx.AsyncClient, url: str, tally: Counter[str], rid: int) -> None:
    """One MRTR flow and a list: a tally of flows, or of errors."""
    first = await _post(
        client, url, "tools/call", {"name": "guarded", "arguments": {"note": str(rid)}}, rid
    )
    second = await _post(
        client,
        url,
        "tools/call",
        {
            "name": "guarded",
            "arguments": {"note": str(rid)},
            "requestState": first["result"]["requestState"],
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
        },
        rid + 1,
    )
    listed = await _post(client, url, "tools/list", {}, rid + 2)
    ok = second.get("result", {}).get("content", [{}])[0].get("text", "").startswith(
        "hello Ada"
    ) and "tools" in listed.get("result", {})
    tally["flows" if ok else "errors"] += 1


def test_soak(http_server: Serving) -> None:
    url = f"{http_server.base}/mcp"
    tally: Counter[str] = Counter()

    async def run(process_pid: int) -> tuple[int, int]:
        # A pooled connection is reused only well within the server's keep-alive time:
        # at equal times (httpx's and uvicorn's 5 s) a lane starved on a busy machine
        # reused one just as the server closed it (httpx.ReadError, the keep-alive race,
        # tests/client/test_keepalive.py). One connection per lane, none closed for its
        # age (CLIENT_KEEP_ALIVE).
        limits = httpx.Limits(
            max_connections=CONCURRENCY,
            max_keepalive_connections=CONCURRENCY,
            keepalive_expiry=CLIENT_KEEP_ALIVE,
        )
        quota = Quota(FLOWS, SECONDS, WARM_UP_FLOWS)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            lanes = [
                asyncio.ensure_future(lane(client, url, quota, tally, n))
                for n in range(CONCURRENCY)
            ]
            everything = asyncio.gather(*lanes)
            # The warm-up's end, or the run's when the time ran out before it.
            await asyncio.wait(
                [asyncio.ensure_future(quota.warmed.wait()), everything],
                return_when=asyncio.FIRST_COMPLETED,
            )
            warm = rss_kib(process_pid)
            await everything
            return warm, rss_kib(process_pid)

    warm, end = asyncio.run(run(http_server.process.pid))
    print(f"soak: {dict(tally)}, RSS {warm} -> {end} KiB")
    assert tally["errors"] == 0, tally
    assert tally["flows"] > min(100, FLOWS // 2)
    assert end < warm * 1.10, f"RSS grew from {warm} KiB to {end} KiB"
