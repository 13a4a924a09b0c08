"""Sealing by hand with a Keyring, outside a server: python state_functions.py

A Keyring holds the options (keys, lifetime, encryption, a replay guard), checked when it
is made; its methods take the request a token is bound to (any object with its method,
params and clock; a handler's Context is one). A Server does the same with its own
keyring for every `requestState`.
"""

import asyncio
import secrets
import tempfile
from pathlib import Path

from snodo import Context, InvalidState, Keyring
from snodo.stores import SQLiteGuard

KEYS = [("2026-11", secrets.token_bytes(32)), ("2026-10", secrets.token_bytes(32))]
folder = tempfile.TemporaryDirectory()
GUARD = SQLiteGuard(str(Path(folder.name) / "state-ids.sqlite3"))
REUSABLE = Keyring(keys=KEYS, ttl=300)  # the options, checked once
ONE_TIME = Keyring(keys=KEYS, ttl=300, guard=GUARD)  # with a guard: every token one-time


def request(tool: str, **arguments: object) -> Context:
    """The request a token is bound to: its method and salient params."""
    params = {"name": tool, "arguments": arguments}
    return Context(1, "tools/call", params, "2026-07-28", {})


async def main() -> None:
    booking = request("book", room="hall")

    # Reusable: opens until it expires, as often as it is presented.
    token = REUSABLE.seal({"step": 2}, booking, principal="ada")
    print("reusable:", REUSABLE.open(token, booking, principal="ada"))
    for name, other, who in (
        ("other room", request("book", room="attic"), "ada"),
        ("other principal", booking, "bob"),
    ):
        try:
            REUSABLE.open(token, other, principal=who)
        except InvalidState:
            print(f"{name}: refused")

    # One-time: opens once, through the keyring's replay guard.
    once = ONE_TIME.seal({"step": 3}, booking)
    print("one-time:", await ONE_TIME.open_once(once, booking))
    try:
        await ONE_TIME.open_once(once, booking)
    except InvalidState:
        print("one-time again: refused")
    try:
        REUSABLE.open(once, booking)
    except InvalidState:
        print("one-time, opened without its guard: refused")
    GUARD.close()
    folder.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
