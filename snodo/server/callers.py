"""Who a request's caller is, and what the server keeps for each caller across requests.

A modern request carries no session: what belongs to a caller is keyed by the principal
the transport authenticated. A legacy session's requests reach the core through the
bridge, which names the session in ``LEGACY_SESSION`` for the rounds it runs (a context
variable: nothing a client sends can set it), so an anonymous legacy client's things
are its session's. Over stdio or in memory there is one client, the local one. An
anonymous modern request over HTTP is nobody in particular: nothing is kept for it.

``ctx.user_state`` is each caller's small key-value store (``UserState``), kept in the
server's ``UserStore``: in this process's memory by default, or in an SQLite file or
Redis (``snodo.stores.key_value``) that every worker shares, so a caller finds what it
kept whichever worker takes its next request. A value is JSON; each key lives ``ttl``
seconds after its last write; a caller holds at most ``max_keys`` keys of at most
``max_value_bytes`` each. The core builds each request's context with the server's
``CallerSpaces``, the one thing it lends the context for this; the core itself keeps
nothing beyond a request.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any, Final

from snodo.core.context import PEER_ADDRESS, Context
from snodo.server.visibility import Rule, Visibility
from snodo.stores.key_value import KeyValueStore, key_value_store

__all__ = [
    "LEGACY_SESSION",
    "LOCAL",
    "CallerSpaces",
    "NoCaller",
    "UserState",
    "UserStateFull",
    "UserStore",
    "address_of",
    "caller_of",
]

LEGACY_SESSION: ContextVar[str | None] = ContextVar("snodo_legacy_session", default=None)
"""The legacy session whose request the bridge is answering through the core."""

LOCAL: Final = "local"
"""The one client of a stdio or in-memory server, when it has no principal."""

_ONE_CLIENT: Final = frozenset({"stdio", "memory"})


def caller_of(ctx: Context) -> str | None:
    """The key of the caller's own things: ``p:`` and its principal, else ``s:`` and its
    legacy session, else ``local`` over stdio or in memory; None for an anonymous
    modern request over HTTP."""
    if ctx.principal is not None:
        return "p:" + ctx.principal
    session = LEGACY_SESSION.get()
    if session is not None:
        return "s:" + session
    if ctx.transport in _ONE_CLIENT:
        return LOCAL
    return None


def address_of(ctx: Context) -> str | None:
    """The client's network address, where the transport knows it (HTTP)."""
    del ctx  # the transport sets it for the task, not in the context
    return PEER_ADDRESS.get()


class NoCaller(RuntimeError):
    """The request names no caller to keep anything for: an anonymous modern request
    over HTTP (no principal, no session)."""

    def __init__(self) -> None:
        super().__init__(
            "nothing is kept for this caller: the request has no principal (the server "
            "authenticates none) and no legacy session"
        )


class UserStateFull(ValueError):
    """A write ``user_state`` refuses: a value too large, or a key beyond the bound."""


class UserStore:
    """Where ``ctx.user_state`` is kept, and its bounds: ``store`` (``memory:``,
    ``sqlite:PATH``, ``redis://...`` or a ``KeyValueStore``), ``ttl`` seconds a key
    lives after its last write, ``max_keys`` per caller, ``max_value_bytes`` per value
    (as JSON)."""

    def __init__(
        self,
        store: str | KeyValueStore = "memory:",
        *,
        ttl: float = 24 * 3600.0,
        max_keys: int = 100,
        max_value_bytes: int = 64 * 1024,
    ) -> None:
        if not ttl > 0 or max_keys < 1 or max_value_bytes < 1:
            raise ValueError("ttl, max_keys and max_value_bytes are positive")
        self.store = key_value_store(store)
        self.ttl = ttl
        self.max_keys = max_keys
        self.max_value_bytes = max_value_bytes


class UserState:
    """One caller's keys in a ``UserStore`` (``snodo.core.context.UserState``)."""

    __slots__ = ("_kept", "_space")

    def __init__(self, kept: UserStore, caller: str) -> None:
        self._kept = kept
        self._space = "user:" + caller

    async def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default``."""
        raw = await self._kept.store.get(self._space, _checked(key))
        return default if raw is None else json.loads(raw)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Keep ``value`` under ``key``; ``UserStateFull`` past the bounds."""
        kept = self._kept
        body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
        if len(body) > kept.max_value_bytes:
            raise UserStateFull(
                f"user_state: {key!r} is {len(body)} bytes as JSON, past {kept.max_value_bytes}"
            )
        written = await kept.store.put(
            self._space, _checked(key), body, kept.ttl if ttl is None else ttl, kept.max_keys
        )
        if not written:
            raise UserStateFull(f"user_state: a caller keeps at most {kept.max_keys} keys")

    async def delete(self, key: str) -> None:
        """Forget ``key``."""
        await self._kept.store.delete(self._space, _checked(key))

    async def keys(self) -> list[str]:
        """The caller's keys, sorted."""
        return sorted(await self._kept.store.keys(self._space))

    async def clear(self) -> None:
        """Forget every key of the caller."""
        await self._kept.store.clear(self._space)


def _checked(key: str) -> str:
    if not isinstance(key, str) or not 0 < len(key) <= 256:
        raise ValueError("a user_state key is a string of 1 to 256 characters")
    return key


class CallerSpaces:
    """What a server lends every request's context for its caller
    (``snodo.core.context.CallerSpace``): its ``user_state``, and its own visibility
    rules (``snodo.server.visibility``), both kept in the server's ``UserStore``."""

    def __init__(self, users: UserStore, visibility: Visibility) -> None:
        self.users = users
        self.visibility = visibility
        visibility.keep_in(users.store, users.ttl)

    async def change_visibility(
        self,
        ctx: Context,
        enable: bool | None,
        names: Iterable[str],
        tags: Iterable[str],
        kinds: Iterable[str] | None,
    ) -> None:
        """Add a rule to the caller's own (``enable`` None: forget them all)."""
        caller = caller_of(ctx)
        if caller is None:
            raise NoCaller()
        rule = None if enable is None else Rule.of(enable, names, tags, kinds)
        await self.visibility.caller_rule(caller, rule)

    def user_state(self, ctx: Context) -> UserState:
        """The caller's ``UserState``; ``NoCaller`` when the request names none."""
        caller = caller_of(ctx)
        if caller is None:
            raise NoCaller()
        return UserState(self.users, caller)
