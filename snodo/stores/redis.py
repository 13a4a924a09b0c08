"""Redis for the stores that span hosts: one way to check a URL, connect and keep clients.

Every feature that keeps its state in Redis (one-time request state, tasks, legacy
sessions, the notification bus and the relays on its link, the OAuth proxy, the
readiness check) connects through here, so they all behave alike:

* ``redis_url`` checks a URL once, when the feature is configured: ``redis://`` or
  ``rediss://`` (TLS, verified against the system's trust store), a password beside any
  user, a database number as the path.
* ``redis_module`` imports the optional ``redis`` package, and without it raises the
  ImportError that names the extra (``snodo[redis]``), when the feature is configured
  rather than on its first request.
* ``connect`` makes every client the same way: RESP2 (plain AUTH, which a server without
  that password refuses; HELLO AUTH would pass on a default user that takes any
  password), ``timeout`` on connecting, and no retries: a command that reached Redis
  before a failure must not run twice (a second ``SET NX``, ``GETDEL`` or create script
  answers differently from the first).
* ``RedisClients`` keeps one client per event loop: asyncio connections belong to the
  loop that opened them, and a loop that ends takes its client out of the table.
* ``standard_errors`` gives redis-py's failures the standard shapes: ``TimeoutError``,
  ``ConnectionError`` (an ``OSError``) when Redis cannot be reached, ``RedisError`` when
  it answers with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "RedisClients",
    "RedisError",
    "connect",
    "redis_module",
    "redis_url",
    "standard_errors",
]


class RedisError(RuntimeError):
    """Redis answered with an error (a refused AUTH, a wrong database, ...)."""


def redis_module(feature: str = "a Redis URL") -> Any:
    """The ``redis`` package (the ``snodo[redis]`` extra), imported when a URL needs it."""
    try:
        # Optional (only URL targets need it), so imported on first use.
        import redis.asyncio  # noqa: PLC0415
        import redis.asyncio.retry  # noqa: PLC0415
        import redis.backoff  # noqa: PLC0415
        import redis.exceptions  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(f"{feature} needs the redis package: pip install 'snodo[redis]'") from exc
    return redis


def redis_url(url: str, owner: str) -> str:
    """``url`` when it is a Redis URL a client can use; else ValueError naming ``owner``."""
    if not isinstance(url, str) or not url.startswith(("redis://", "rediss://")):
        raise ValueError(f"{owner} URL must start with redis:// or rediss://")
    parts = urlsplit(url)
    if parts.username and not parts.password:
        raise ValueError("a Redis URL with a user needs a password: redis://user:pw@host")
    path = parts.path.strip("/")
    if path and not path.isdigit():
        raise ValueError("the path of a Redis URL is the database number")
    return url


def connect(
    url: str,
    owner: str,
    *,
    timeout: float,
    command_timeout: float | None = None,
    max_connections: int | None = None,
) -> Any:
    """A ``redis.asyncio.Redis`` client of ``url``: RESP2, no retries, ``timeout`` on
    connecting, ``command_timeout`` (None: none) on each reply. With ``max_connections``
    its pool is bounded and blocking: a command waits for a free connection, for as long
    as the caller's own timeout allows."""
    redis = redis_module(owner)
    options: dict[str, Any] = {
        "socket_connect_timeout": timeout,
        "socket_timeout": command_timeout,
        "retry": redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0),
        "protocol": 2,
    }
    if max_connections is None:
        return redis.asyncio.Redis.from_url(url, **options)
    pool = redis.asyncio.BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=None, **options
    )
    return redis.asyncio.Redis(connection_pool=pool)


class RedisClients:
    """The clients of one Redis URL in this process: one per event loop, made on first
    use with ``connect``'s settings. The URL is checked and the package imported when
    it is built, so a bad configuration fails at start-up."""

    __slots__ = ("_clients", "_options", "owner", "url")

    def __init__(
        self,
        url: str,
        owner: str,
        *,
        timeout: float,
        command_timeout: float | None = None,
        max_connections: int | None = None,
    ) -> None:
        self.url = redis_url(url, owner)
        self.owner = owner
        redis_module(owner)  # the ImportError naming the extra now, not on the first request
        self._options: dict[str, Any] = {
            "timeout": timeout,
            "command_timeout": command_timeout,
            "max_connections": max_connections,
        }
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]
        self._clients = weakref.WeakKeyDictionary()

    def client(self) -> Any:
        """This event loop's client."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = connect(self.url, self.owner, **self._options)
        return client

    async def aclose(self) -> None:
        """Close this event loop's client; call it before the loop ends."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await _close(client)

    async def close(self) -> None:
        """Close every loop's client; from a loop that is still running, each of them."""
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await _close(client)


async def _close(client: Any) -> None:
    await client.aclose()
    await client.connection_pool.disconnect()  # a pool the client was handed stays open


@contextlib.contextmanager
def standard_errors() -> Iterator[None]:
    """Raise redis-py's failures as ``TimeoutError``, ``ConnectionError`` or
    ``RedisError``, so a caller need not import the optional package to catch them."""
    redis = redis_module()
    try:
        yield
    except redis.exceptions.AuthenticationError as exc:  # a ConnectionError to redis-py
        raise RedisError(str(exc)) from exc
    except redis.exceptions.TimeoutError as exc:
        raise TimeoutError(str(exc)) from exc
    except redis.exceptions.ConnectionError as exc:
        raise ConnectionError(str(exc)) from exc
    except redis.exceptions.RedisError as exc:
        raise RedisError(str(exc)) from exc
