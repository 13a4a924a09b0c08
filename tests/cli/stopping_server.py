"""A server for the stop-signal tests: a tool that asks a question (served to a legacy
client through the bridge) and a tool that never returns on its own.

    python -m snodo run tests/cli/stopping_server.py:server --transport http
"""

from __future__ import annotations

import asyncio
import sys

from snodo.asking import elicitation
from snodo.core.context import Context
from snodo.core.result import MISSING, InputRequired, input_required
from snodo.server import Server

__all__ = ["server"]

server = Server("stopping", "1.0.0", state_secret=b"\x18" * 32)

NAME = elicitation.form(
    "Your name?",
    {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
)


@server.tool
def ask(ctx: Context) -> InputRequired | str:
    """Asks a name, then greets."""
    answer = elicitation.response(ctx, "name", NAME)
    if answer is MISSING:
        return input_required({"name": NAME})
    return "hello"


@server.tool
async def hang() -> str:
    """Says it started (on stderr, which the tests read), then waits until cancelled."""
    print("hang: started", file=sys.stderr, flush=True)
    await asyncio.Event().wait()
    return "never"
