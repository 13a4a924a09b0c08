"""Every store that keeps its state in Redis connects the one way ``snodo.stores.redis``
says: the same URL check, RESP2, no retries, the store's timeouts, a client per loop."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any

import pytest

from snodo.auth.proxy_store import RedisProxyStore
from snodo.extensions.tasks.redis import RedisTaskStore
from snodo.legacy.store import RedisSessionStore
from snodo.server.notify_bus import RedisBus
from snodo.stores import RedisGuard
from snodo.stores.pubsub import RedisLink
from snodo.stores.redis import RedisClients, connect, redis_url

URL = "redis://127.0.0.1:1/3"
"""Nothing listens there: making a client connects nothing."""

STORES: dict[str, Callable[[str], Any]] = {
    "RedisGuard": lambda url: RedisGuard(url, timeout=1.5),
    "RedisTaskStore": lambda url: RedisTaskStore(url, timeout=1.5),
    "RedisSessionStore": lambda url: RedisSessionStore(url, timeout=1.5),
    "RedisProxyStore": lambda url: RedisProxyStore(url, timeout=1.5),
    "RedisBus": lambda url: RedisBus(url, timeout=1.5),
    "legacy relay": lambda url: RedisLink(
        url, ("c",), timeout=1.5, name="legacy relay", logger=logging.getLogger("t")
    ),
}


@pytest.mark.parametrize("owner", sorted(STORES))
@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1", "must start with redis:// or rediss://"),
        ("127.0.0.1:6379", "must start with redis:// or rediss://"),
        ("redis://user@127.0.0.1", "needs a password"),
        ("redis://127.0.0.1/db", "database number"),
    ],
)
def test_every_store_refuses_the_same_urls(owner: str, url: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as refused:
        STORES[owner](url)
    if "must start" in says:
        assert str(refused.value).startswith(owner)


def test_a_good_url_is_kept_as_given() -> None:
    for url in ("redis://127.0.0.1", "rediss://u:p@h:6380/2", "redis://:pw@h/"):
        assert redis_url(url, "x") == url


def _settings(client: Any) -> dict[str, Any]:
    kwargs = client.connection_pool.connection_kwargs
    retry = kwargs["retry"]
    return {
        "protocol": kwargs["protocol"],
        "retries": retry._retries,
        "connect": kwargs["socket_connect_timeout"],
        "reply": kwargs["socket_timeout"],
    }


def test_each_store_makes_its_clients_the_one_way() -> None:
    async def clients() -> dict[str, Any]:
        guard = RedisGuard(URL, timeout=1.5, max_connections=3)
        tasks = RedisTaskStore(URL, timeout=1.5)
        sessions = RedisSessionStore(URL, timeout=1.5)
        proxy = RedisProxyStore(URL, timeout=1.5)
        made = {
            "guard": guard._target.client(),  # type: ignore[union-attr]
            "tasks": tasks._client(),
            "sessions": sessions._connections.client(),
            "proxy": proxy._client(),
        }
        await asyncio.gather(guard.aclose(), tasks.aclose(), sessions.close(), proxy.aclose())
        return made

    made = asyncio.run(clients())
    seen = {name: _settings(client) for name, client in made.items()}
    no_retry = {"protocol": 2, "retries": 0, "connect": 1.5}
    assert seen == {
        "guard": {**no_retry, "reply": None},  # consume's own timeout bounds each call
        "tasks": {**no_retry, "reply": None},
        "sessions": {**no_retry, "reply": 1.5},
        "proxy": {**no_retry, "reply": 1.5},
    }
    assert made["guard"].connection_pool.max_connections == 3


def test_a_client_belongs_to_its_event_loop() -> None:
    clients = RedisClients(URL, "t", timeout=1.0)

    async def twice() -> tuple[Any, Any]:
        return clients.client(), clients.client()

    first, again = asyncio.run(twice())
    other, _ = asyncio.run(twice())
    assert first is again and other is not first


def test_without_the_package_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("redis", "redis.asyncio", "redis.asyncio.retry", "redis.backoff"):
        monkeypatch.setitem(sys.modules, name, None)
    for owner, make in STORES.items():
        with pytest.raises(ImportError, match=rf"^{owner} needs .*snodo\[redis\]"):
            make(URL)
    with pytest.raises(ImportError, match=r"snodo\[redis\]"):
        connect(URL, "x", timeout=1.0)
