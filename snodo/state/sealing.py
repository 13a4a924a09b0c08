"""The server's sealed-state step: what it does with an echoed state, and the sealer.

``with_state`` verifies the state a retry echoes before any middleware or
handler sees the request, and gives the context a sealer for the next round; with an
observer it also carries the observer's flow mark from one round's state to the next
and reports a refusal's reason, which never reaches the client.
"""

from __future__ import annotations

from typing import Any

from snodo.context import Context, refilled
from snodo.errors import InvalidState
from snodo.observe import Observation
from snodo.state.keyring import Keyring

__all__ = ["with_state"]


async def with_state(
    keyring: Keyring, ctx: Context, observation: Observation | None = None
) -> Context:
    """Verify an echoed requestState before anything else sees the request.

    A forged, expired or misbound state is -32602 and no middleware or handler runs; a
    valid one arrives as ``ctx.state_data``. With a guard, a state presented a second
    time is refused the same way (and a store failure is an internal error): it is
    consumed here, before the handler runs.
    """
    principal = ctx.principal
    data = None
    if ctx.request_state is not None:
        if observation is None:
            data = await keyring.accept(ctx.request_state, ctx, principal=principal)
        else:
            try:
                data, flow = await keyring.accept_flow(ctx.request_state, ctx, principal=principal)
            except InvalidState as exc:
                observation.state_refused(exc.reason)
                raise
            observation.state_accepted(flow)
    # The sealer binds to ``ctx`` (method, params, clock), which has no sealer itself:
    # the context handed on holds the sealer, and nothing refers back to it.

    if observation is None:

        def sealer(value: Any) -> str:
            return keyring.seal(value, ctx, principal=principal)

    else:

        def sealer(value: Any) -> str:
            mark = observation.flow_mark()
            return keyring.seal(value, ctx, principal=principal, flow=mark)

    return refilled(ctx, state_data=data, sealer=sealer)
