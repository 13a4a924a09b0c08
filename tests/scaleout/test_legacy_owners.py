"""One client cannot take every legacy session of workers that share a redis-server.

Two ``snodo run`` workers share Redis for their sessions, with a bound of 8 sessions
and 2 per client (an unauthenticated client is its address). A greedy client at
127.0.0.1 opens 40 sessions, alternating workers: each is answered, and each ends that
client's least recently used session wherever it was opened, so it never holds more
than 2. Three more clients then take the 6 places left, on either worker, and a fifth
is refused: both bounds are counted in the store, across workers.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.scaleout.test_legacy_sessions import HEADERS, INIT, Redis, Worker, start_worker
from tests.support.processes import stop

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="127.0.0.2 as a source")

PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


@pytest.fixture(scope="module")
def workers() -> Iterator[list[Worker]]:
    redis = Redis()
    redis.start()
    bounds = {"SNODO_LEGACY_MAX_SESSIONS": "8", "SNODO_LEGACY_PER_PRINCIPAL": "2"}
    started = [start_worker(name, redis, **bounds) for name in ("a", "b")]
    try:
        yield started
    finally:
        for worker in started:
            stop(worker.process)
        redis.stop()


def client_at(address: str) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(transport=transport, timeout=30)


def test_one_client_cannot_take_the_sessions_of_every_worker(workers: list[Worker]) -> None:
    urls = [f"http://127.0.0.1:{worker.port}/mcp" for worker in workers]

    async def opens(client: httpx.AsyncClient, number: int) -> httpx.Response:
        return await client.post(urls[number % 2], json=INIT, headers=HEADERS)

    async def pings(client: httpx.AsyncClient, session: str) -> int:
        headers = {**HEADERS, "mcp-session-id": session}
        return (await client.post(urls[1], json=PING, headers=headers)).status_code

    async def scenario() -> None:
        async with client_at("127.0.0.1") as greedy:
            opened: list[str] = []
            for number in range(40):
                answer = await opens(greedy, number)
                assert answer.status_code == 200, (number, answer.text)
                opened.append(answer.headers["mcp-session-id"])
            alive = [session for session in opened if await pings(greedy, session) == 200]
            assert alive == opened[-2:], "only its 2 most recent sessions live, on any worker"
            for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
                async with client_at(address) as other:
                    for number in range(2):
                        answer = await opens(other, number)
                        assert answer.status_code == 200, (address, answer.text)
            async with client_at("127.0.0.5") as late:
                refused = await opens(late, 0)
                assert refused.status_code == 503, "8 live across both workers: full"
                assert refused.text == "too many sessions"
            again = await opens(greedy, 1)  # at its cap: ends its own oldest, not another's
            assert again.status_code == 200
            assert await pings(greedy, opened[-2]) == 404
            assert await pings(greedy, opened[-1]) == 200

    asyncio.run(asyncio.wait_for(scenario(), 60))
