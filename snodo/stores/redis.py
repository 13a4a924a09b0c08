"""Redis for the stores that span hosts: the ``redis`` package, imported when a URL needs it.

Every feature that keeps its state in Redis (one-time request state, tasks, legacy
sessions, the notification bus) reaches the optional package through ``redis_module``,
so a bare install says which extra to add in one line.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RedisError", "redis_module"]


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
