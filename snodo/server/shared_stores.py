"""One Redis setting for every store a server's workers must share.

``Server(redis=URL)``, or ``SNODO_REDIS`` when it is not given, stands for four settings:
the replay guard that makes request state one-time (``RedisGuard``), legacy sessions
(``LegacyLimits(store=)``), the notification bus (``RedisBus``) and the OAuth proxy's
store (``RedisProxyStore``, when it was built with no ``store=``: it reads ``SNODO_REDIS``
itself, and its ``DefaultStore`` takes ``redis=`` from the server). An extension reads the
URL as the server's ``redis`` when it is installed (``Host.redis``): the tasks extension
keeps its tasks there when it was given no store. Whatever is set alone stays as it is
set: the URL fills only the settings left at their defaults, so one of them may still
point elsewhere.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Final, Literal

from snodo.auth.protected import ProtectedResource
from snodo.core.state.replay import ReplayGuard
from snodo.server.legacy_limits import LegacyLimits
from snodo.server.notify_bus import NotificationBus, RedisBus

__all__ = ["REDIS_ENV", "SharedStores", "redis_url", "shared_stores"]

REDIS_ENV: Final = "SNODO_REDIS"
"""The Redis URL every worker of a deployment shares, when the code names none."""


def redis_url(given: str | None = None) -> str | None:
    """``given``, else ``SNODO_REDIS``, else None; checked to be a Redis URL."""
    url = given if given is not None else os.environ.get(REDIS_ENV) or None
    if url is not None and not url.startswith(("redis://", "rediss://")):
        where = "redis=" if given is not None else REDIS_ENV
        raise ValueError(f"{where} must be a redis:// or rediss:// URL, got {url!r}")
    return url


@dataclasses.dataclass(frozen=True, slots=True)
class SharedStores:
    """The settings a server is built with, the Redis URL's filled in."""

    state_guard: ReplayGuard | bool
    legacy: LegacyLimits | Literal["stateless"] | None
    notifications: NotificationBus | None


def shared_stores(
    url: str | None,
    *,
    state_guard: ReplayGuard | bool,
    legacy: LegacyLimits | Literal["stateless"] | None,
    notifications: NotificationBus | None,
    authorization: ProtectedResource | None,
    keyring_given: bool = False,
) -> SharedStores:
    """The settings with ``url`` (``redis_url``'s) filling those left at their defaults
    (a ``keyring`` given whole keeps its own guard); an OAuth proxy given no store gets
    the Redis one."""
    if url is None:
        return SharedStores(state_guard, legacy, notifications)
    # The default guard (True) becomes the shared one; a guard object, or False (the
    # author's opt-out), stays.
    if state_guard is True and not keyring_given:
        from snodo.stores.replay import RedisGuard  # noqa: PLC0415 - the redis extra

        state_guard = RedisGuard(url)
    if isinstance(legacy, LegacyLimits) and legacy.store is None and not legacy.stateless:
        legacy = dataclasses.replace(legacy, store=url)
    if notifications is None:
        notifications = RedisBus(url)
    _share_proxy_store(authorization, url)
    return SharedStores(state_guard, legacy, notifications)


def _share_proxy_store(authorization: Any, url: str) -> None:
    """An OAuth proxy given no store keeps its sign-ins in Redis at ``url`` from now on
    (it was built before the server, holding a ``DefaultStore`` for this); one given a
    store, or reading ``SNODO_REDIS`` already, keeps its own."""
    from snodo.auth.proxy_store import DefaultStore, MemoryProxyStore  # noqa: PLC0415

    store = getattr(authorization, "store", None)
    if isinstance(store, DefaultStore) and isinstance(store.inner, MemoryProxyStore):
        from snodo.auth.proxy_store import RedisProxyStore  # noqa: PLC0415 - the redis extra

        store.use(RedisProxyStore(url))
