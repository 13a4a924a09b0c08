"""Plain HTTP routes beside the MCP endpoint, and what readiness means for a server.

``@server.route("/status")`` registers a function that takes a ``Request`` and returns
a ``Response``, a string (``text/plain``) or any JSON value (``application/json``);
``snodo run`` (the HTTP app, ``snodo.transports.http``) answers it at that path, so a
server run without a web framework can still offer a status page or a webhook. These
routes are plain HTTP: the Host and Origin checks apply, MCP's authentication does not
(a route checks what it needs from ``request.headers``).

``ready`` is what ``/readyz`` asks: every Redis the server was configured with by URL
(the replay guard, the task store, the notification bus, the legacy session store)
answering a PING in time. A guard given a client object of its own is not pinged. The
probe answers anyone who reaches the server, so it names only the dependency that
failed: its URL (hosts, ports, a password in its query) and the error go to the log.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from snodo.server.notify_bus import RedisBus
from snodo.stores.redis import connect
from snodo.stores.replay import RedisGuard

__all__ = [
    "Request",
    "Response",
    "Route",
    "RouteHandler",
    "ready",
    "redis_dependencies",
    "redis_urls",
]

log = logging.getLogger("snodo.server")


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


def redis_dependencies(server: Any) -> dict[str, str]:
    """The Redis URLs a server was configured with, by the name of what each serves."""
    found: dict[str, str | None] = {}
    guard = getattr(server.keyring, "guard", None)
    if isinstance(guard, RedisGuard):
        found["replay guard"] = guard.url
    for extension in server.extensions.values():  # the task store, say
        found.update(extension.dependencies())
    if isinstance(server.subscriptions.bus, RedisBus):
        found["notification bus"] = server.subscriptions.bus.url
    if server.legacy is not None and server.legacy.store is not None:
        found["legacy session store"] = server.legacy.store
    return {name: url for name, url in found.items() if url}


def redis_urls(server: Any) -> list[str]:
    """The Redis URLs a server was configured with, each once, in a fixed order."""
    return list(dict.fromkeys(redis_dependencies(server).values()))


async def ready(server: Any, timeout: float = 2.0) -> list[str]:
    """The dependencies that are not ready (none when the server is): each whose Redis
    does not answer a PING within ``timeout`` seconds, by name (``redis_dependencies``);
    why goes to the log."""
    named = redis_dependencies(server)
    if not named:
        return []
    urls = list(dict.fromkeys(named.values()))
    pinged = await asyncio.gather(*(_ping(url, timeout) for url in urls))
    answers = dict(zip(urls, pinged, strict=True))
    failed = [name for name, url in named.items() if answers[url] is not None]
    for name in failed:
        log.warning("not ready: the %s's Redis: %s", name, answers[named[name]])
    return failed


async def _ping(url: str, timeout: float) -> str | None:
    client = connect(url, "the readiness check", timeout=timeout)  # one ping, then closed
    try:
        async with asyncio.timeout(timeout):
            await client.ping()
    except Exception as exc:  # any failure is the answer: not ready, and why
        return "no answer in time" if isinstance(exc, TimeoutError) else type(exc).__name__
    finally:
        await client.aclose()
    return None
