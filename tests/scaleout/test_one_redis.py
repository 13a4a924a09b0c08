"""One Redis setting (``Server(redis=URL)`` or ``SNODO_REDIS``) wires every store a
server's workers must share, and leaves a store set alone as it was set.

First what each setting becomes; then two ``snodo run`` processes of one server, given
only ``SNODO_REDIS`` and the same state keys: a legacy session opened on one is
answered by the other, and a sealed request state spent on one is refused by the other
(one-time across workers). Without the setting, both would fail.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from snodo.core.http_headers import request_headers
from snodo.server import LegacyLimits, Server, State
from snodo.server.notify_bus import LocalBus, RedisBus
from tests.replay.conftest import redis_url
from tests.support.paths import ROOT
from tests.support.processes import accepting, free_port, snodo_run, stop

pytest.importorskip("redis")

__all__ = ["redis_url"]  # the fixture, from the replay tests' conftest

KEYS = "a:" + "aa" * 32
OTHER = "redis://127.0.0.1:1/5"
"""Another Redis, for a store set alone (never connected to here)."""


def test_one_url_fills_every_store_left_at_its_default(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from snodo.extensions.tasks.engine import Tasks
    from snodo.extensions.tasks.redis import RedisTaskStore
    from snodo.extensions.tasks.store import MemoryTaskStore
    from snodo.stores import MemoryGuard, RedisGuard

    monkeypatch.delenv("SNODO_REDIS", raising=False)
    tasks = Tasks()
    server = Server("one", "1", redis=redis_url, extensions=[tasks])
    assert server.redis == redis_url
    assert isinstance(server.keyring.guard, RedisGuard)
    assert server.legacy is not None and server.legacy.store == redis_url
    assert isinstance(server.subscriptions.bus, RedisBus)
    assert isinstance(tasks.store, RedisTaskStore)

    own_tasks = Tasks(MemoryTaskStore())
    guard = MemoryGuard()
    alone = Server(
        "alone",
        "1",
        redis=redis_url,
        state=State(guard=guard),
        legacy=LegacyLimits(store=OTHER),
        notifications=LocalBus(),
        extensions=[own_tasks],
    )
    assert alone.keyring.guard is guard
    assert alone.legacy is not None and alone.legacy.store == OTHER
    assert isinstance(alone.subscriptions.bus, LocalBus)
    assert isinstance(own_tasks.store, MemoryTaskStore)
    assert Server("stateless", "1", redis=redis_url, legacy="stateless").legacy == LegacyLimits(
        stateless=True
    )

    opted_out = Server("opted out", "1", redis=redis_url, state=State(guard=False))
    assert opted_out.keyring.guard is None

    plain = Server("plain", "1")
    assert plain.redis is None and isinstance(plain.keyring.guard, MemoryGuard)
    assert isinstance(plain.subscriptions.bus, LocalBus)

    monkeypatch.setenv("SNODO_REDIS", redis_url)
    from_environment = Server("env", "1")
    assert isinstance(from_environment.keyring.guard, RedisGuard)
    assert from_environment.legacy is not None and from_environment.legacy.store == redis_url


def test_the_oauth_proxy_keeps_sign_ins_in_the_one_redis(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy built with no store, before the server: ``Server(redis=)`` moves what it
    keeps to Redis; with ``SNODO_REDIS`` it reads the setting itself; a store it was
    given stays."""
    pytest.importorskip("authlib")
    from snodo.auth import OAuthProxy
    from snodo.auth.proxy_store import DefaultStore, MemoryProxyStore, RedisProxyStore

    def proxy(**options: Any) -> OAuthProxy:
        return OAuthProxy(
            base_url="http://127.0.0.1:8000",
            authorize_url="http://127.0.0.1:9/authorize",
            token_url="http://127.0.0.1:9/token",
            client_id="c",
            client_secret="s",
            verify=lambda token: {"sub": "x"},
            secret="a secret of 16 bytes or more",
            **options,
        )

    async def kept_in_redis(store: Any, key: str) -> bytes | None:
        """Whether what ``store`` keeps is read back from Redis (each client closed)."""
        reader = RedisProxyStore(redis_url)
        try:
            await store.put(key, b"a grant", 60)
            return await reader.get(key)
        finally:
            await reader.aclose()
            inner = store.inner if isinstance(store, DefaultStore) else store
            if isinstance(inner, RedisProxyStore):
                await inner.aclose()

    monkeypatch.delenv("SNODO_REDIS", raising=False)
    built_first = proxy()
    assert isinstance(built_first.store, DefaultStore)
    assert isinstance(built_first.store.inner, MemoryProxyStore)
    assert asyncio.run(kept_in_redis(built_first.store, "before")) is None
    Server("one", "1", redis=redis_url, authorization=built_first)
    assert asyncio.run(kept_in_redis(built_first.store, "after")) == b"a grant"
    assert "memory" not in (built_first.unshared() or "")

    given = MemoryProxyStore()
    Server("given", "1", redis=redis_url, authorization=proxy(store=given))
    assert asyncio.run(kept_in_redis(given, "given")) is None

    monkeypatch.setenv("SNODO_REDIS", redis_url)
    shared = proxy()
    assert isinstance(shared.store, DefaultStore)
    assert asyncio.run(kept_in_redis(shared.store, "read")) == b"a grant"


def test_a_url_that_is_not_redis_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="redis= must be a redis:// or rediss:// URL"):
        Server("bad", "1", redis="http://127.0.0.1:6379")
    monkeypatch.setenv("SNODO_REDIS", "localhost:6379")
    with pytest.raises(ValueError, match="SNODO_REDIS must be a redis://"):
        Server("bad", "1")


# -- two processes, one setting ----------------------------------------------------------


@pytest.fixture
def workers(redis_url: str) -> Iterator[list[str]]:
    env = {**os.environ, "SNODO_STATE_KEYS": KEYS, "SNODO_REDIS": redis_url}
    started: list[tuple[subprocess.Popen[bytes], int]] = []
    try:
        for index in range(2):
            port = free_port()
            command = snodo_run("tests/scaleout/server.py:server", "http", "--port", str(port))
            env["SNODO_WORKER"] = str(index)
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            started.append((process, port))
            assert accepting(process, port), "a worker did not start"
        yield [f"http://127.0.0.1:{port}/mcp" for _, port in started]
    finally:
        for process, _ in started:
            stop(process)


HEADERS = {"accept": "application/json, text/event-stream"}


def legacy_answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON or one-event SSE answer."""
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return dict(httpx.Response(200, content=data[-1].strip()).json())
    return dict(response.json())


def test_workers_share_sessions_and_spend_state_once(workers: list[str]) -> None:
    first, second = workers
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    with httpx.Client(timeout=30) as http:
        opened = http.post(first, json=initialize, headers=HEADERS)
        assert opened.status_code == 200, opened.text
        session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert http.post(second, json=initialized, headers=session).status_code == 202
        listed = http.post(
            second, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
        )
        assert listed.status_code == 200, listed.text
        assert [t["name"] for t in legacy_answer(listed)["result"]["tools"]] == ["wizard"]

        def call(url: str, rid: int, extra: dict[str, Any]) -> dict[str, Any]:
            params = {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                },
                "name": "wizard",
                "arguments": {"flow": 1},
                **extra,
            }
            body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
            headers = {
                "content-type": "application/json",
                **request_headers("tools/call", params, "2026-07-28"),
            }
            return dict(http.post(url, json=body, headers=headers).json())

        asked = call(first, 10, {})
        retry = {
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
            "requestState": asked["result"]["requestState"],
        }
        assert "requestState" in call(second, 11, retry)["result"]  # the next question
        again = call(first, 12, retry)  # the same state, spent on the other worker
        assert again["error"]["code"] == -32602, again
