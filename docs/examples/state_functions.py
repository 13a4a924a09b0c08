"""Sealing by hand with snodo.core.state, outside a server: python state_functions.py

The functions take the request a token is bound to (any object with its method, params
and clock; a handler's Context is one) and the options; pass `open` the options `seal`
got. A Server does the same with its own keyring for every `requestState`.
"""

import asyncio
import secrets
import tempfile
from pathlib import Path

from snodo import Context, Keyring
from snodo.core import state
from snodo.core.errors import InvalidState
from snodo.stores import SQLiteGuard

KEYS = [("2026-11", secrets.token_bytes(32)), ("2026-10", secrets.token_bytes(32))]
folder = tempfile.TemporaryDirectory()
GUARD = SQLiteGuard(str(Path(folder.name) / "state-ids.sqlite3"))
KEYRING = Keyring(keys=KEYS, ttl=300, guard=GUARD)  # the options, checked once


def request(tool: str, **arguments: object) -> Context:
    """The request a token is bound to: its method and salient params."""
    params = {"name": tool, "arguments": arguments}
    return Context(1, "tools/call", params, "2026-07-28", {})


async def main() -> None:
    booking = request("book", room="hall")

    # Reusable: opens until it expires, as often as it is presented.
    token = state.seal({"step": 2}, booking, keys=KEYS, principal="ada")
    print("reusable:", state.open(token, booking, keys=KEYS, principal="ada"))
    for name, other, who in (
        ("other room", request("book", room="attic"), "ada"),
        ("other principal", booking, "bob"),
    ):
        try:
            state.open(token, other, keys=KEYS, principal=who)
        except InvalidState:
            print(f"{name}: refused")

    # One-time: opens once, through a replay guard.
    once = state.seal({"step": 2}, booking, keys=KEYS, once=True)
    print("one-time:", await state.open_once(once, booking, guard=GUARD, keys=KEYS))
    try:
        await state.open_once(once, booking, guard=GUARD, keys=KEYS)
    except InvalidState:
        print("one-time again: refused")

    # The same with a Keyring: one-time, because it has a guard.
    sealed = KEYRING.seal({"step": 3}, booking)
    print("keyring:", await KEYRING.open_once(sealed, booking))
    GUARD.close()
    folder.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
