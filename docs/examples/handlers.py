"""Sync handlers in threads, a lifespan, and a timeout: python handlers.py"""

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from snodo import Client, Context, Server
from snodo.client.transports import MemoryTransport


class Notes:
    """What a database pool would be: opened once per worker, shared by the handlers."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.lock = threading.Lock()
        self.db.execute("create table notes (text)")

    def add(self, text: str) -> int:
        with self.lock:
            self.db.execute("insert into notes values (?)", (text,))
            return int(self.db.execute("select count(*) from notes").fetchone()[0])


@asynccontextmanager
async def notes(server: Server) -> AsyncIterator[Notes]:
    print("lifespan: open")
    opened = Notes()
    try:
        yield opened
    finally:
        opened.db.close()
        print("lifespan: closed")


server = Server("handlers", "1.0.0", lifespan=notes)


@server.tool
def add_note(ctx: Context, text: str) -> str:
    """A plain def runs in a thread: it may block without stalling other requests."""
    time.sleep(0.2)  # a slow disk, a remote database
    count = ctx.lifespan_as(Notes).add(text)
    return f"{count} note(s), added in {threading.current_thread().name.split('_')[0]}"


@server.tool(inline=True)
def shout(text: str) -> str:
    """Cheap and never blocks: inline=True keeps it on the event loop, no thread hop."""
    return text.upper()


@server.tool(timeout=0.5)
async def summarise() -> str:
    """Past its timeout, the caller gets an error result and the work is cancelled."""
    await asyncio.sleep(10)
    return "never"


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        slow = asyncio.create_task(client.call_tool("add_note", {"text": "milk"}))
        await asyncio.sleep(0.05)  # add_note is asleep in its thread now
        quick = await client.call_tool("shout", {"text": "hello"})
        print(quick.content[0].text, "answered while add_note sleeps:", not slow.done())
        print((await slow).content[0].text)
        timed_out = await client.call_tool("summarise")
        print(timed_out.is_error, timed_out.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
