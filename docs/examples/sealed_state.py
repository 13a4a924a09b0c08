"""Sealed state: key rotation across workers, binding, one-time state, encryption.
python sealed_state.py

Each "worker" is a Server with its own keyring, as separate processes would be; a flow
paused on one (manual mode) is resumed on another, as a load balancer would send it.
"""

import asyncio
import dataclasses
import secrets
import tempfile
from pathlib import Path
from typing import Any

from snodo import (
    MISSING,
    Client,
    Context,
    Flow,
    Keyring,
    RequestError,
    Server,
    State,
    elicitation,
    input_required,
)
from snodo.client.transports import MemoryTransport
from snodo.stores import SQLiteGuard

OLD, NEW = secrets.token_bytes(32), secrets.token_bytes(32)
COLOUR = elicitation.form(
    "Favourite colour?",
    {"type": "object", "properties": {"colour": {"type": "string"}}, "required": ["colour"]},
)


def worker(keyring: Keyring) -> Server:
    server = Server("paint", "1.0.0", state=State(keyring=keyring))

    @server.tool
    def paint(ctx: Context, room: str) -> object:
        """Paint a room in the user's colour."""
        answer = elicitation.response(ctx, "colour", COLOUR)
        if isinstance(answer, elicitation.Accepted):
            return f"{room}: {answer.content['colour']} (sealed: {ctx.state_data})"
        if answer is not MISSING:
            return "Left as it is."
        return input_required({"colour": COLOUR}, state={"asked": room})

    return server


def user(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"colour": "blue"}}


def client(server: Server) -> Client:
    return Client(MemoryTransport(server), elicitation=user)


async def start(server: Server, room: str = "hall") -> Flow:
    """Round one on this worker, paused: the Flow is what a client would store."""
    flow = await client(server).call_tool("paint", {"room": room}, manual=True)
    assert isinstance(flow, Flow)
    return flow


async def finish(server: Server, flow: Flow) -> str:
    """The retry, on whichever worker the load balancer picked."""
    try:
        result = await client(server).resume(flow)
    except RequestError as refused:
        return f"refused: {refused.code} {refused.message}"
    return str(result.content[0].text)


async def main() -> None:
    # Three-step rotation: deploy each step to every worker before the next one.
    step1 = worker(Keyring(keys=[("old", OLD), ("new", NEW)]))  # seal old, accept new
    step2 = worker(Keyring(keys=[("new", NEW), ("old", OLD)]))  # seal new, accept old
    step3 = worker(Keyring(keys=[("new", NEW)]))  # once the longest TTL has passed
    print("1 -> 2:", await finish(step2, await start(step1)))
    print("2 -> 1:", await finish(step1, await start(step2)))
    print("1 -> 3:", await finish(step3, await start(step1)))  # too early for step 3

    # The state is bound to the request: other arguments, same token, refused.
    flow = await start(step2)
    moved = dataclasses.replace(flow, params={**flow.params, "arguments": {"room": "attic"}})
    print("other room:", await finish(step2, moved))

    # One-time state: a guard every worker shares consumes each token on first use.
    with tempfile.TemporaryDirectory() as folder:
        guard = SQLiteGuard(str(Path(folder) / "state-ids.sqlite3"))
        once = [worker(Keyring(secret=NEW, guard=guard)) for _ in range(2)]
        flow = await start(once[0])
        print("first use:", await finish(once[1], flow))
        print("replayed:", await finish(once[0], flow))
        guard.close()

    # Encrypted state: same binding and keys, contents hidden from the client.
    sealed = await start(worker(Keyring(secret=NEW, encrypted=True)))
    readable = await start(step2)
    print("formats:", str(sealed.result.request_state)[:3], str(readable.result.request_state)[:3])


if __name__ == "__main__":
    asyncio.run(main())
