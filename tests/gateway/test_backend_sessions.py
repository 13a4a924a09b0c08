"""The bounds of a proxy's backend sessions, one per front client
(``snodo.gateway.backend_sessions``), on a fake clock with clients that only record
being closed: the limit, the longest idle session giving its place, a call waiting
(never refused) while every session is in use, idle sessions closed, and the turns
of a stdio backend's calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from snodo.gateway.backend_sessions import ANONYMOUS, BackendSession, BackendSessions


class FakeClient:
    def __init__(self, owner: str, closed: list[str]) -> None:
        self.owner = owner
        self.closed = closed

    async def close(self) -> None:
        self.closed.append(self.owner)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def sessions(limit: int = 2) -> tuple[BackendSessions, list[str]]:
    closed: list[str] = []
    clock = Clock()
    main = BackendSession(ANONYMOUS, False, clock)

    def make(session: BackendSession) -> Any:
        return FakeClient(session.owner, closed)

    return BackendSessions(make, main, limit=limit, idle_timeout=60, clock=clock), closed


def test_each_front_client_has_its_own_and_the_anonymous_one_the_proxys() -> None:
    async def main() -> None:
        pool, _ = sessions()
        async with pool.using("address:a") as a, pool.using("address:b") as b:
            assert a is not b and a.client is not None and a.client.owner == "address:a"  # type: ignore[attr-defined]
            async with pool.using("address:a") as again:
                assert again is a and a.busy == 2
        async with pool.using(ANONYMOUS) as anonymous:
            assert anonymous is pool.main
        assert set(pool.sessions) == {"address:a", "address:b"}

    asyncio.run(main())


def test_beyond_the_limit_the_longest_idle_gives_its_place() -> None:
    async def main() -> None:
        pool, closed = sessions(limit=2)
        clock: Any = pool.clock
        async with pool.using("address:a"):
            pass
        clock.now = 5
        async with pool.using("address:b"):
            pass
        clock.now = 10
        async with pool.using("address:c"):
            assert set(pool.sessions) == {"address:b", "address:c"}
        await pool.close()
        assert closed[0] == "address:a"
        assert sorted(closed[1:]) == ["address:b", "address:c"]

    asyncio.run(main())


def test_when_every_session_is_in_use_a_new_client_waits_for_a_place() -> None:
    async def main() -> None:
        pool, closed = sessions(limit=1)
        release = asyncio.Event()
        entered: list[str] = []

        async def call(owner: str) -> None:
            async with pool.using(owner):
                entered.append(owner)
                if owner == "address:a":
                    await release.wait()

        first = asyncio.ensure_future(call("address:a"))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(call("address:b"))
        for _ in range(20):
            await asyncio.sleep(0)
        assert entered == ["address:a"] and not second.done()  # waiting, not refused
        release.set()
        await asyncio.gather(first, second)
        assert entered == ["address:a", "address:b"]
        await pool.close()
        assert closed == ["address:a", "address:b"]

    asyncio.run(main())


def test_sessions_unused_past_the_idle_timeout_are_closed() -> None:
    async def main() -> None:
        pool, closed = sessions(limit=4)
        clock: Any = pool.clock
        async with pool.using("address:a"):
            clock.now = 100  # in use: not idle however long the call takes
            pool.sweep()
            assert "address:a" in pool.sessions
        clock.now = 130
        async with pool.using("address:b"):
            pass
        clock.now = 161
        pool.sweep()
        assert list(pool.sessions) == ["address:b"]
        clock.now = 500
        pool.sweep()
        assert pool.sessions == {}
        await pool.close()
        assert closed == ["address:a", "address:b"]

    asyncio.run(main())


def test_a_stdio_sessions_calls_take_turns_in_order() -> None:
    async def main() -> None:
        session = BackendSession(ANONYMOUS, True, Clock())
        order: list[str] = []
        holders: list[Any] = []

        async def call(name: str) -> None:
            async with session.turn_of(name):
                holders.append(session.holder)
                order.append(f"{name} in")
                await asyncio.sleep(0)
                order.append(f"{name} out")

        await asyncio.gather(*(call(name) for name in ("one", "two", "three")))
        assert order == ["one in", "one out", "two in", "two out", "three in", "three out"]
        assert holders == ["one", "two", "three"]

    asyncio.run(main())


def test_bounds_must_be_positive() -> None:
    main = BackendSession(ANONYMOUS, False, Clock())
    with pytest.raises(ValueError, match="must be positive"):
        BackendSessions(lambda s: None, main, limit=0)  # type: ignore[arg-type,return-value]
