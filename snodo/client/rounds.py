"""The MRTR loop of one flow: send, answer the input requests, send again, within bounds.

When a server answers ``input_required``, every input request of the round is checked
(``InputHandlers.check_round``: the cap on requests per round, capabilities,
sub-capabilities, URL schemes) before any handler runs; the answers go back with the
same request, a fresh id and the exact ``requestState``. Rounds stop at
``max_rounds`` (``TooManyRounds``); state-only rounds back off exponentially, but
never sleep past the deadline, and no round is waited for after the last
(``DeadlineExceeded``). With ``manual`` the first InputRequiredResult is returned as a
``Flow``. A result of another kind ends the rounds: what follows is the client half's
that takes it (``snodo.client.extensions.ResultKind``: a task), handed the call's
deadline instant.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from snodo.client.errors import DeadlineExceeded, ProtocolViolation, TooManyRounds
from snodo.client.handlers import InputHandlers
from snodo.client.limits import ClientLimits
from snodo.client.results import INPUT_REQUIRED, RESULT_MODELS, Flow, complete_result, validated

__all__ = ["FlowBounds", "OnOther", "Send", "run_flow"]

Send = Callable[[dict[str, Any], float | None], Awaitable[dict[str, Any]]]
"""Sends the flow's request with these params, bounded by a ``time.monotonic()``
instant (or not); returns its result."""

OnOther = Callable[[str, dict[str, Any], float | None], Awaitable[Any]]
"""Takes a result of another kind than the core's (its ``resultType``: a task, say), the
result, and the call's ``time.monotonic()`` deadline instant (or None); returns what the
call returns."""


@dataclass(frozen=True, slots=True)
class FlowBounds:
    max_rounds: int
    backoff: tuple[float, float]
    """First and longest pause before re-sending after a state-only round, seconds."""
    deadline: float | None
    limits: ClientLimits


async def run_flow(
    send: Send,
    inputs: InputHandlers,
    bounds: FlowBounds,
    method: str,
    params: dict[str, Any],
    responses: dict[str, Any] | None,
    state: str | None,
    manual: bool,
    on_other: OnOther,
) -> Any:
    """The flow's complete result (validated), or with ``manual`` its ``Flow``; when
    the server answers with another kind of result (a task), what ``on_other`` makes of
    it."""
    deadline = bounds.deadline
    until = None if deadline is None else time.monotonic() + deadline
    delay = bounds.backoff[0]
    pause = 0.0
    for _ in range(bounds.max_rounds):
        if pause:
            # A state-only round: wait before asking again, never past the deadline.
            if until is not None and until - time.monotonic() <= pause:
                raise DeadlineExceeded(f"{method} did not complete within {deadline} s")
            await asyncio.sleep(pause)
        sent = dict(params)
        if responses is not None:
            sent["inputResponses"] = responses
        if state is not None:
            sent["requestState"] = state
        result = await send(sent, until)
        kind = result.get("resultType", "complete")  # absent: an older server's result
        if kind == "complete":
            return complete_result(RESULT_MODELS[method], result)
        if kind != "input_required":
            return await on_other(str(kind), result, until)
        interim = validated(INPUT_REQUIRED, result)
        if manual:
            return Flow(method, params, interim)
        requests = result.get("inputRequests") or {}
        state = result.get("requestState")
        if not requests and state is None:
            raise ProtocolViolation("input_required without inputRequests or requestState")
        answers = await inputs.answer_round(requests, bounds.limits.max_input_requests)
        if requests:
            pause, delay = 0.0, bounds.backoff[0]
        else:
            pause, delay = delay, min(delay * 2, bounds.backoff[1])
        responses = answers or None
        if until is not None and time.monotonic() > until:
            raise DeadlineExceeded(f"{method} did not complete within {deadline} s")
    raise TooManyRounds(f"{method} still needed input after {bounds.max_rounds} rounds")
