"""A worker for the scale-out tests: its state keyring comes from the environment.

SNODO_STATE_KEYS="a:<hex>,b:<hex>" (the first key seals); every worker of a
deployment gets the same value, and nothing else is shared.
"""

from __future__ import annotations

import os
from typing import Any

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.server import Server, State


def keyring(spec: str) -> list[tuple[str, bytes]]:
    pairs = [item.split(":", 1) for item in spec.split(",") if item]
    return [(kid, bytes.fromhex(secret)) for kid, secret in pairs]


NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)
COLOR = elicitation.form(
    "Colour?",
    {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
)

server = Server(
    "worker",
    os.environ.get("SNODO_WORKER", "0"),
    state=State(keys=keyring(os.environ["SNODO_STATE_KEYS"])),
)


@server.tool
def wizard(ctx: Context, flow: int) -> Any:
    """Two questions, one per round; the first answer travels in sealed state."""
    known = dict(ctx.state_data or {})
    for key, question in (("name", NAME), ("color", COLOR)):
        answer = elicitation.response(ctx, key, question)
        if isinstance(answer, elicitation.Accepted):
            known[key] = answer.content[key]
        if key not in known:
            return input_required({key: question}, request_state=ctx.seal(known))
    return f"flow {flow}: {known['name']} likes {known['color']}"
