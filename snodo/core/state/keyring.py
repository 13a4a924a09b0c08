"""The keyring: every state option checked once and carried together.

A ``Keyring`` holds the keys (``secret=`` or ``keys=``), the lifetime of the tokens it
seals and accepts, whether it encrypts, and an optional one-time guard. Bad options raise
when it is built, so a server fails at start-up, not on a request; after that ``seal``,
``open`` and ``open_once`` check nothing but the token and the data. Any process that
holds an equal keyring opens what another sealed, which is how workers share state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from snodo.core.errors import InvalidState
from snodo.core.state import keys as state_keys
from snodo.core.state.replay import MemoryGuard, ReplayGuard
from snodo.core.state.token import (
    CLOCK_SKEW,
    DEFAULT_TTL,
    StateContext,
    Verified,
    check_asked,
    check_flag,
    check_flow,
    check_principal,
    lifetime,
    seal_token,
    verify_token,
)

__all__ = ["Keyring", "server_keyring"]


class Keyring:
    """Keys, TTL, encryption and one-time guard for sealed request state.

    ``secret`` (32+ random bytes) or ``keys`` (``[(kid, secret), ...]``, sealing with the
    first) is required. ``ttl`` is the lifetime in seconds of tokens sealed, and the most
    a token may claim to be opened. ``encrypted`` hides the payload (needs the
    ``cryptography`` package); tokens of both formats open either way. With a ``guard``
    every token is sealed one-time and ``open_once`` consumes it through the guard.
    """

    __slots__ = ("_keys", "_lifetime", "encrypted", "guard", "ttl")

    def __init__(
        self,
        *,
        secret: bytes | None = None,
        keys: Sequence[tuple[str, bytes]] | None = None,
        ttl: float = DEFAULT_TTL,
        encrypted: bool = False,
        guard: ReplayGuard | None = None,
    ) -> None:
        self._keys = state_keys.key_set(secret, keys)
        self._lifetime = lifetime(ttl)
        self.ttl = ttl
        self.encrypted = check_flag("encrypted", encrypted)
        if encrypted:
            state_keys.aead()  # ImportError naming the extra, now rather than on a request
        if guard is not None and not callable(getattr(guard, "consume", None)):
            raise TypeError("guard must be a ReplayGuard (an object with async consume)")
        self.guard = guard

    def seal(
        self,
        data: Any,
        ctx: StateContext,
        *,
        principal: str | None = None,
        once: bool | None = None,
        randbytes: Callable[[int], bytes] = os.urandom,
        flow: str | None = None,
        asked: Mapping[str, str] | None = None,
    ) -> str:
        """A token carrying ``data``, bound to this request and ``principal``.

        One-time (``once``) by default exactly when the keyring has a guard.
        ``randbytes`` supplies the one-time id, then the nonce; replace it only to
        reproduce test vectors. ``flow`` is an observer's mark linking this round to the
        next (``snodo.core.observe``), sealed beside the data; ``asked`` the questions the flow
        has asked, by key (``snodo.core.input_responses.pin``), which the server seals for itself.
        ValueError for data that is not JSON, a bad flow mark or asked map, or a token
        that would exceed the length limit.
        """
        check_principal(principal)
        one_time = self.guard is not None if once is None else check_flag("once", once)
        return seal_token(
            self._keys,
            data,
            ctx,
            principal,
            self._lifetime,
            one_time,
            self.encrypted,
            randbytes,
            check_flow(flow),
            check_asked(asked),
        )

    def open(self, token: str, ctx: StateContext, *, principal: str | None = None) -> Any:
        """The data sealed into a reusable ``token`` for this request; else InvalidState.

        One-time tokens are refused: they open only through ``open_once``.
        """
        check_principal(principal)
        verified = verify_token(self._keys, token, ctx, principal, self._lifetime)
        if verified.jti is not None:
            raise InvalidState("one_time")
        return verified.data

    async def open_once(
        self,
        token: str,
        ctx: StateContext,
        *,
        principal: str | None = None,
        guard: ReplayGuard | None = None,
    ) -> Any:
        """Like ``open`` for a one-time token, and only the first time it is presented.

        The token is verified completely before the guard (``guard``, else the
        keyring's) consumes its id, so forgeries never reach the store. The guard holds
        the id until ``exp + CLOCK_SKEW``. A replayed or reusable token is InvalidState;
        a failing store raises its own error, so the request fails rather than skipping
        the check.
        """
        return (await self._open_once(token, ctx, principal, guard)).data

    async def _open_once(
        self, token: str, ctx: StateContext, principal: str | None, guard: ReplayGuard | None
    ) -> Verified:
        check_principal(principal)
        guard = guard if guard is not None else self.guard
        if guard is None:
            raise TypeError("open_once needs a guard: pass one, or build the keyring with one")
        verified = verify_token(self._keys, token, ctx, principal, self._lifetime)
        if verified.jti is None:
            raise InvalidState("reusable")
        if not await guard.consume(verified.jti, verified.expires + CLOCK_SKEW):
            raise InvalidState("replayed")
        return verified

    async def accept(self, token: str, ctx: StateContext, *, principal: str | None = None) -> Any:
        """What a server does with an echoed token: ``open_once`` with a guard, else ``open``."""
        return (await self.accept_verified(token, ctx, principal=principal)).data

    async def accept_verified(
        self, token: str, ctx: StateContext, *, principal: str | None = None
    ) -> Verified:
        """``accept``, returning all the token held: the data, and the flow mark and asked
        questions sealed beside it."""
        if self.guard is not None:
            verified = await self._open_once(token, ctx, principal, None)
        else:
            check_principal(principal)
            verified = verify_token(self._keys, token, ctx, principal, self._lifetime)
            if verified.jti is not None:
                raise InvalidState("one_time")
        return verified


SECRET_ENV = "SNODO_STATE_SECRET"
"""The environment variable a server without ``State``'s ``secret``, ``keys`` or
``keyring`` reads its secret from: hex, at least 32 bytes."""


def environment_secret(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The secret in ``SNODO_STATE_SECRET`` (None when unset); ValueError naming the
    variable when it is not hex."""
    value = (os.environ if environ is None else environ).get(SECRET_ENV, "").strip()
    if not value:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise ValueError(f"{SECRET_ENV} must be hex: 64 digits for 32 random bytes") from None


def server_keyring(
    keyring: Keyring | None,
    secret: bytes | None,
    keys: Sequence[tuple[str, bytes]] | None,
    ttl: float,
    guard: ReplayGuard | bool,
    encrypted: bool,
    clock: Callable[[], float],
) -> tuple[Keyring, bool]:
    """A server's keyring, and whether its key was made for this process alone.

    Given, or built from ``State``'s other fields, else from ``SNODO_STATE_SECRET``,
    else from a random key of this process's own (then only this process can open what
    it sealed: fine for stdio or one worker, not for several). Checked here, so a bad
    combination fails when the server is made.
    """
    if keyring is not None:  # it brings its own guard, or none
        given = (secret, keys) != (None, None) or guard is not True or encrypted
        if given or ttl != DEFAULT_TTL:
            raise ValueError(
                "State(keyring=...) brings its own keys, ttl and guard: give it alone,"
                " or State(secret=..., ttl=..., guard=...) without it"
            )
        return keyring, False
    per_process = False
    if secret is None and keys is None:
        secret = environment_secret()
        if secret is None:
            secret, per_process = os.urandom(32), True
    # True (the default): a MemoryGuard on the server's clock (one process); False: none,
    # by the author's choice. With a guard every state is sealed one-time and consumed
    # when it comes back (mrtr.mdx: servers needing at-most-once consumption MUST enforce
    # it server-side; a handler that asks cannot know whether its retry is a replay).
    if guard is True:
        chosen: ReplayGuard | None = MemoryGuard(clock=clock)
    elif guard is False:
        chosen = None
    elif not callable(getattr(guard, "consume", None)):
        raise TypeError("State(guard=...) must be True, False or a ReplayGuard (async consume)")
    else:
        chosen = guard
    made = Keyring(secret=secret, keys=keys, ttl=ttl, encrypted=encrypted, guard=chosen)
    return made, per_process
