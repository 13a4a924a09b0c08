"""An extension of one's own: advertised, a custom method, a notification. python extensions.py"""

import asyncio
from typing import Any

from pydantic import BaseModel

from snodo import Client, Context, RequestError, Server
from snodo.client.transports import MemoryTransport
from snodo.server import Extension

NOTES = Extension("com.example/notes", {"maxLength": 280})


class Pin(BaseModel):
    text: str


class Pinned(BaseModel):
    id: int
    declared: bool


PINNED: list[str] = []


@NOTES.method("notes/pin", params=Pin)
def pin(ctx: Context, params: Pin) -> Pinned:
    """Pin a note; tell the client's stream which one."""
    PINNED.append(params.text)
    NOTES.notify(ctx, "notes/pinned", {"id": len(PINNED)})
    return Pinned(id=len(PINNED), declared=ctx.client_supports(NOTES.id))


server = Server("notes", "1.0.0", extensions=[NOTES])


def heard(note: dict[str, Any]) -> None:
    print("notification:", note["method"], note["params"]["id"])


async def main() -> None:
    transport = MemoryTransport(server)
    client = Client(transport, extensions={NOTES.id: {}}, on_notification=heard)
    async with client:
        print("offered:", await client.server_supports(NOTES.id))
        result = await client.request("notes/pin", {"text": "buy milk"})
        print("pinned:", result["id"], "declared:", result["declared"])
        try:
            await client.request("notes/pin", {"txt": "typo"})
        except RequestError as refused:
            print(refused.code, refused.message)


if __name__ == "__main__":
    asyncio.run(main())
