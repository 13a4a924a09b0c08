"""``@server.route`` and what readiness reads of a server: registration checks, return
values as responses, the Redis URLs a server was configured with (each once), and
readiness answers that never show a password."""

from __future__ import annotations

import asyncio

import pytest

from snodo import Server, State
from snodo.extensions.tasks import Tasks
from snodo.extensions.tasks.redis import RedisTaskStore
from snodo.server import LegacyLimits
from snodo.server.notify_bus import RedisBus
from snodo.server.routes import Request, Response, ready, redis_dependencies, redis_urls
from snodo.stores import RedisGuard


def test_a_route_answers_what_its_function_returns() -> None:
    server = Server("routes", "1.0.0")

    @server.route("/text")
    def text(request: Request) -> str:
        return f"{request.method} {request.path}"

    @server.route("/json", methods=["post"])
    async def data(request: Request) -> object:
        return {"got": request.json()}

    got = asyncio.run(server.routes["/text"].answer(Request("GET", "/text")))
    assert got == Response(200, b"GET /text")
    posted = asyncio.run(server.routes["/json"].answer(Request("POST", "/json", body=b"[1]")))
    assert posted == Response(200, b'{"got": [1]}', "application/json")
    assert server.routes["/text"].methods == {"GET", "HEAD"}
    assert server.routes["/json"].methods == {"POST"}


@pytest.mark.parametrize(
    ("path", "methods", "error"),
    [("status", ["GET"], ValueError), ("/status", [], ValueError)],
)
def test_a_route_is_checked_when_registered(
    path: str, methods: list[str], error: type[Exception]
) -> None:
    server = Server("routes", "1.0.0")
    with pytest.raises(error):
        server.route(path, methods=methods)(lambda request: "")


def test_the_redis_urls_a_server_was_configured_with() -> None:
    assert redis_urls(Server("plain", "1.0.0")) == []
    one, two = "redis://127.0.0.1:1/0", "redis://:secret@127.0.0.1:2/1"
    server = Server(
        "redis",
        "1.0.0",
        state=State(secret=b"k" * 32, guard=RedisGuard(one)),
        extensions=[Tasks(RedisTaskStore(two))],
        notifications=RedisBus(one),
        legacy=LegacyLimits(store=two),
    )
    assert redis_urls(server) == [one, two]
    assert redis_dependencies(server) == {
        "replay guard": one,
        "task store": two,
        "notification bus": one,
        "legacy session store": two,
    }


def test_readiness_names_the_dependency_that_failed_and_nothing_of_its_url() -> None:
    closed = "redis://:secret@127.0.0.1:1/0?password=hunter2"
    server = Server(
        "redis",
        "1.0.0",
        state=State(secret=b"k" * 32, guard=RedisGuard(closed)),
        extensions=[Tasks(RedisTaskStore(closed))],
    )
    assert asyncio.run(ready(server, timeout=5)) == ["replay guard", "task store"]
