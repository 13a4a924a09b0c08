"""Sealing state by hand with snodo.state, for handlers that manage their own keys:
python state_functions.py

A Server built without keys passes `requestState` through untouched; the handler then
seals and opens it itself. Pass `open` the options `seal` got.
"""

import asyncio
import secrets
import tempfile
from pathlib import Path
from typing import Any

from snodo import Client, Context, Keyring, Server, elicitation, input_required, state
from snodo.client.transports import MemoryTransport
from snodo.state.replay import SQLiteGuard

KEYS = [("2026-11", secrets.token_bytes(32)), ("2026-10", secrets.token_bytes(32))]
folder = tempfile.TemporaryDirectory()
GUARD = SQLiteGuard(str(Path(folder.name) / "state-ids.sqlite3"))
KEYRING = Keyring(keys=KEYS, ttl=300, guard=GUARD)  # the options, checked once

server = Server("manual-state", "1.0.0")  # no keyring: state is the handlers' business
NEXT = elicitation.form(
    "Go on?", {"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]}
)


@server.tool
def reusable(ctx: Context) -> object:
    """Two rounds; the state may be presented again until it expires."""
    if ctx.request_state is None:
        token = state.seal({"step": 2}, ctx, keys=KEYS, principal=ctx.principal)
        return input_required({"next": NEXT}, request_state=token)
    data = state.open(ctx.request_state, ctx, keys=KEYS, principal=ctx.principal)
    return f"reusable: {data}"


@server.tool
async def one_time(ctx: Context) -> object:
    """Two rounds; the state opens once, through a replay guard."""
    if ctx.request_state is None:
        token = state.seal({"step": 2}, ctx, keys=KEYS, principal=ctx.principal, once=True)
        return input_required({"next": NEXT}, request_state=token)
    data = await state.open_once(
        ctx.request_state, ctx, guard=GUARD, keys=KEYS, principal=ctx.principal
    )
    return f"one-time: {data}"


@server.tool
async def with_keyring(ctx: Context) -> object:
    """The same with a Keyring: one-time, because it has a guard."""
    if ctx.request_state is None:
        token = KEYRING.seal({"step": 2}, ctx, principal=ctx.principal)
        return input_required({"next": NEXT}, request_state=token)
    data = await KEYRING.open_once(ctx.request_state, ctx, principal=ctx.principal)
    return f"keyring: {data}"


def go(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"go": True}}


async def main() -> None:
    async with Client(MemoryTransport(server), elicitation=go) as client:
        for tool in ("reusable", "one_time", "with_keyring"):
            print((await client.call_tool(tool)).content[0].text)
    GUARD.close()
    folder.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
