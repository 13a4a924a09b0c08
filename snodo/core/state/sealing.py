"""The server's sealed-state step: what it does with an echoed state, and the sealer.

``open_state_now`` (or ``open_state``, where a guard must consume the state) verifies the state
a retry echoes before any middleware or handler sees the request, and gives the server
the data and the questions the flow has asked so far (``ctx.asked``) for the request's
context, whose ``Sealer`` seals for the next round.
With an observer it also carries the observer's flow mark from one round's state to the
next and reports a refusal's reason, which never reaches the client.

``seal_asked`` is the other end: when a handler asks, the questions of the round are sealed
into the state it hands out (a digest of each, by key), beside what the handler sealed,
so that on the retry only answers to questions this flow asked count
(``snodo.core.input_responses``). The handler does nothing for it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from snodo.core.context import Context
from snodo.core.errors import InternalError, InvalidState
from snodo.core.input_responses import pin
from snodo.core.observe import Observation
from snodo.core.result import NO_STATE, InputRequired, mark_taken
from snodo.core.state.keyring import Keyring
from snodo.core.state.token import (
    Verified,
    binding_of,
    check_asked,
    check_flow,
    check_principal,
    seal_token,
    verify_token,
)

__all__ = [
    "NOTHING_OPENED",
    "UNKNOWN",
    "Opened",
    "Sealer",
    "open_state",
    "open_state_now",
    "seal_asked",
    "sealer_of",
]

log = logging.getLogger("snodo")

UNKNOWN: Any = object()
"""``Sealer.data_of`` for a state it cannot read without the keys."""

NOTHING_ASKED: Mapping[str, str] = MappingProxyType({})
"""The questions a request without state answers: none."""


class Sealer:
    """``ctx.seal``: seals for this request, and remembers what it sealed, so the state
    the handler returns can be sealed again with the round's questions.

    It holds what a token is bound to (method, params, principal) and the request's
    clock, as a ``StateContext``, not the context itself: the context holds the sealer,
    and nothing refers back to it (no cycle for the collector)."""

    __slots__ = (
        "binding",
        "clock",
        "keyring",
        "observation",
        "principal",
        "request_method",
        "request_params",
        "request_state",
        "sealed",
    )

    def __init__(
        self,
        keyring: Keyring,
        request_method: str,
        request_params: Mapping[str, Any],
        clock: Callable[[], float],
        principal: str | None,
        request_state: str | None,
        observation: Observation | None,
    ) -> None:
        self.keyring = keyring
        self.request_method = request_method
        self.request_params = request_params
        self.clock = clock
        self.principal = principal
        self.request_state = request_state
        """The requestState the request echoed, if any."""
        self.observation = observation
        self.sealed: dict[str, Any] | None = None
        """What ``ctx.seal`` sealed in this request, by token."""
        self.binding: bytes | None = None
        """What every token sealed in this request is bound to, once worked out: a
        handler's seal and the server's with the round's questions share it."""

    def __call__(self, value: Any) -> str:
        token = self.seal(value, None)
        if self.sealed is None:
            self.sealed = {}
        self.sealed[token] = value
        return token

    def data_of(self, state: str | None, echoed: Any) -> Any:
        """What a requestState a handler returned carries, where this request knows it
        without opening it: nothing for none, what ``ctx.seal`` sealed, ``echoed`` for
        the state the request came with; ``UNKNOWN`` for any other."""
        if state is None:
            return None
        if self.sealed is not None and state in self.sealed:
            return self.sealed[state]
        if state == self.request_state:
            return echoed
        return UNKNOWN

    def seal(self, value: Any, asked: Mapping[str, str] | None) -> str:
        """``Keyring.seal`` for this request, but for the checks of what is the server's
        own here (the principal its transport gave; options the keyring checked)."""
        mark = self.observation.flow_mark() if self.observation is not None else None
        if self.binding is None:
            self.binding = binding_of(self, self.principal)
        keyring = self.keyring  # the same package: its keys stay out of the public API
        return seal_token(
            keyring._keys,
            value,
            self,
            self.principal,
            keyring._lifetime,
            keyring.guard is not None,  # one-time exactly when there is a guard
            keyring.encrypted,
            os.urandom,
            check_flow(mark),
            check_asked(asked),
            self.binding,
        )


def sealer_of(keyring: Keyring, ctx: Context, observation: Observation | None) -> Sealer:
    """A sealer for the request ``ctx`` answers."""
    return Sealer(
        keyring,
        ctx.request_method,
        ctx.request_params,
        ctx.clock,
        ctx.principal,
        ctx.request_state,
        observation,
    )


Opened = tuple[Any, Mapping[str, str]]
"""What an echoed state gives the request's context: its data, and the questions the
flow asked (``Context.state_data``, ``Context.asked``)."""

NOTHING_OPENED: Opened = (None, NOTHING_ASKED)
"""What a request without state has of one."""


def open_state_now(sealer: Sealer) -> Opened | None:
    """The state the request echoed, verified without waiting, as most requests can
    have it; None when the keyring's guard must consume it first (then await
    ``open_state``).

    A forged, expired or misbound state is -32602 (``InvalidState``), before any
    middleware or handler runs; with an observer, the reason is reported to it only.
    """
    token = sealer.request_state
    if token is None:
        return NOTHING_OPENED
    keyring = sealer.keyring
    if keyring.guard is not None:
        return None
    # Keyring.accept_verified without a guard, minus the coroutine: the keys are read
    # here as the sealer reads them (the same package; they stay out of the public API).
    check_principal(sealer.principal)
    try:
        verified = verify_token(keyring._keys, token, sealer, sealer.principal, keyring._lifetime)
        if verified.jti is not None:
            raise InvalidState("one_time")
    except InvalidState as exc:
        _refused(sealer.observation, exc)
        raise
    return _accepted(sealer.observation, verified)


async def open_state(sealer: Sealer) -> Opened:
    """``open_state_now`` for any keyring: with a guard, a state presented a second time is
    refused the same way (and a store failure is an internal error); it is consumed
    here, before the handler runs."""
    token = sealer.request_state
    if token is None:
        return NOTHING_OPENED
    try:
        verified = await sealer.keyring.accept_verified(token, sealer, principal=sealer.principal)
    except InvalidState as exc:
        _refused(sealer.observation, exc)
        raise
    return _accepted(sealer.observation, verified)


def _refused(observation: Observation | None, exc: InvalidState) -> None:
    if observation is not None:
        observation.state_refused(exc.reason)


def _accepted(observation: Observation | None, verified: Verified) -> Opened:
    if observation is not None:
        observation.state_accepted(verified.flow)
    asked = NOTHING_ASKED if verified.asked is None else MappingProxyType(verified.asked)
    return verified.data, asked


def seal_asked(keyring: Keyring, ctx: Context, outcome: InputRequired) -> InputRequired:
    """``outcome`` with the questions this flow has asked sealed into its state.

    The state is what the handler handed over with ``input_required(state=...)``
    (sealed here, once), what it sealed with ``ctx.seal`` (sealed again, with the
    questions beside it), the state it echoed, one it sealed with the server's keyring
    itself, or none (an empty state carrying only the questions). A flow that has asked
    nothing is left as it is.
    """
    mark_taken(outcome)
    asked = pin(ctx.asked, outcome.input_requests)
    handed = outcome.state
    if not asked and handed is NO_STATE:
        return outcome
    sealer = ctx.sealer if isinstance(ctx.sealer, Sealer) else sealer_of(keyring, ctx, None)
    state = outcome.request_state
    data = handed if handed is not NO_STATE else sealer.data_of(state, ctx.state_data)
    if data is UNKNOWN:
        assert state is not None
        try:
            data = keyring.open(state, ctx, principal=ctx.principal)
        except InvalidState as exc:
            log.error(
                "%s handler returned a requestState this server's keys did not seal (%s);"
                " seal it with ctx.seal",
                ctx.request_method,
                exc.reason,
            )
            raise InternalError() from None
    try:
        sealed = sealer.seal(data, asked or None)
    except ValueError as exc:  # the handler's state= is not JSON, or too much of it
        log.error("%s handler's input_required state cannot be sealed: %s", ctx.request_method, exc)
        raise InternalError() from None
    return InputRequired(outcome.input_requests, sealed, outcome.url_required)
