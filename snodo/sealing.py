"""The server's sealed-state step: what it does with an echoed state, and the sealer.

``open_state`` verifies the state a retry echoes before any middleware or handler sees
the request, and makes the sealer for the next round; with an observer it also carries
the observer's flow mark from one round's state to the next and reports a refusal's
reason, which never reaches the client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from snodo.errors import InvalidState
from snodo.keyring import Keyring
from snodo.observe import Observation
from snodo.state_token import StateContext

__all__ = ["open_state"]


async def open_state(
    keyring: Keyring,
    request: StateContext,
    request_state: str | None,
    principal: str | None,
    observation: Observation | None = None,
) -> tuple[Any, Callable[[Any], str]]:
    """The data an echoed requestState carries (None without one), and the sealer.

    A forged, expired or misbound state is -32602 and no middleware or handler runs; a
    valid one's data becomes ``ctx.state_data``. With a guard, a state presented a second
    time is refused the same way (and a store failure is an internal error): it is
    consumed here, before the handler runs. The sealer binds the next round's state to
    ``request`` (its method, params and clock) and ``principal``.
    """
    data = None
    if request_state is not None:
        if observation is None:
            data = await keyring.accept(request_state, request, principal=principal)
        else:
            try:
                data, flow = await keyring.accept_flow(request_state, request, principal=principal)
            except InvalidState as exc:
                observation.state_refused(exc.reason)
                raise
            observation.state_accepted(flow)

    if observation is None:

        def sealer(value: Any) -> str:
            return keyring.seal(value, request, principal=principal)

    else:

        def sealer(value: Any) -> str:
            mark = observation.flow_mark()
            return keyring.seal(value, request, principal=principal, flow=mark)

    return data, sealer
