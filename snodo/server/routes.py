"""Plain HTTP routes beside the MCP endpoint, and what readiness means for a server.

``@server.route("/status")`` registers a function that takes a ``Request`` and returns
a ``Response``, a string (``text/plain``) or any JSON value (``application/json``);
``snodo run`` (the HTTP app, ``snodo.transports.http``) answers it at that path, so a
server run without a web framework can still offer a status page or a webhook. These
routes are plain HTTP: the Host and Origin checks apply, MCP's authentication does not
(a route checks what it needs from ``request.headers``).

``ready`` is what ``/readyz`` asks: every Redis the server was configured with by URL
(the replay guard, the tasks store, the notification bus, the legacy session store)
answering a PING in time. A guard given a client object of its own is not pinged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from snodo.server.notify_bus import RedisBus
from snodo.stores.redis import connect
from snodo.stores.replay import RedisGuard
from snodo.tasks.redis import RedisTaskStore

__all__ = ["Request", "Response", "Route", "RouteHandler", "ready", "redis_urls"]


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request to a route: method, path, query string, headers (lower-case
    names), and the whole body."""

    method: str
    path: str
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        """The body read as JSON (``ValueError`` when it is not)."""
        return json.loads(self.body)


@dataclass(frozen=True, slots=True)
class Response:
    """What a route answers: a status, a body and its type, and other headers."""

    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, value: Any) -> Response:
        """A handler's return value as a response: a ``Response`` as it is, a string as
        text, anything else as JSON."""
        if isinstance(value, Response):
            return value
        if isinstance(value, str):
            return cls(200, value.encode())
        return cls(200, json.dumps(value).encode(), "application/json")


RouteHandler = Callable[[Request], Awaitable[Any] | Any]
"""A route's function: a ``Request`` in; a ``Response``, a string or a JSON value out,
returned or awaited."""


@dataclass(frozen=True, slots=True)
class Route:
    """A registered route: its path, the methods it answers, and its function."""

    path: str
    methods: frozenset[str]
    handler: RouteHandler

    async def answer(self, request: Request) -> Response:
        """What the route's function answers ``request``, as a ``Response``."""
        found = self.handler(request)
        return Response.of(await found if inspect.isawaitable(found) else found)


def route(path: str, methods: Iterable[str], handler: RouteHandler) -> Route:
    """A ``Route`` checked at registration: an absolute path, known method names."""
    if not path.startswith("/"):
        raise ValueError(f"a route's path starts with '/': {path!r}")
    named = frozenset(m.upper() for m in methods)
    if not named:
        raise ValueError("a route answers at least one method")
    if not callable(handler):
        raise TypeError("a route's handler is a function of a Request")
    return Route(path, named | ({"HEAD"} if "GET" in named else set()), handler)


def redis_urls(server: Any) -> list[str]:
    """The Redis URLs a server was configured with, each once, in a fixed order."""
    found: list[str | None] = []
    guard = getattr(server.keyring, "guard", None)
    if isinstance(guard, RedisGuard):
        found.append(guard.url)
    tasks = server.offering.tasks
    if tasks is not None and isinstance(tasks.store, RedisTaskStore):
        found.append(tasks.store.url)
    if isinstance(server.subscriptions.bus, RedisBus):
        found.append(server.subscriptions.bus.url)
    if server.legacy is not None and server.legacy.store is not None:
        found.append(server.legacy.store)
    return list(dict.fromkeys(url for url in found if url))


def redacted(url: str) -> str:
    """A Redis URL without its password, for a readiness answer anyone may read."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port is not None else ""
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}{port}", parts.path, "", ""))


async def ready(server: Any, timeout: float = 2.0) -> list[str]:
    """Why the server is not ready (empty when it is): each configured Redis that does
    not answer a PING within ``timeout`` seconds."""
    urls = redis_urls(server)
    if not urls:
        return []
    results = await asyncio.gather(*(_ping(url, timeout) for url in urls))
    return [reason for reason in results if reason is not None]


async def _ping(url: str, timeout: float) -> str | None:
    client = connect(url, "the readiness check", timeout=timeout)  # one ping, then closed
    try:
        async with asyncio.timeout(timeout):
            await client.ping()
    except Exception as exc:  # any failure is the answer: not ready, and why
        why = "no answer in time" if isinstance(exc, TimeoutError) else type(exc).__name__
        return f"redis {redacted(url)}: {why}"
    finally:
        await client.aclose()
    return None
