"""A cart kept for each user across requests, whichever worker takes them: ctx.user_state.
python user_state.py
"""

import asyncio
import tempfile
from pathlib import Path

from snodo import Client, Context, Server
from snodo.client.transports import MemoryTransport
from snodo.server import UserStore


def worker(store: str) -> Server:
    """One worker of the shop: every worker keeps carts in the same store."""
    server = Server("shop", "1.0.0", user_store=UserStore(store, ttl=3600, max_keys=20))

    @server.tool
    async def add_to_cart(item: str, ctx: Context) -> str:
        """Put an item in the caller's cart."""
        cart = await ctx.user_state.get("cart", [])
        cart.append(item)
        await ctx.user_state.set("cart", cart)
        return f"{len(cart)} in the cart"

    @server.tool
    async def checkout(ctx: Context) -> str:
        """Buy what is in the caller's cart, and empty it."""
        cart = await ctx.user_state.get("cart", [])
        await ctx.user_state.delete("cart")
        return "bought " + (", ".join(cart) or "nothing")

    return server


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        # An SQLite file the workers of one host share; redis://... for several hosts.
        store = f"sqlite:{Path(folder) / 'carts.db'}"
        workers = [worker(store), worker(store)]
        for principal, items in [("alice", ["tea", "scones"]), ("bob", ["coffee"])]:
            for number, item in enumerate(items):  # each request to the next worker
                front = workers[number % 2]
                async with Client(MemoryTransport(front, principal=principal)) as client:
                    await client.call_tool("add_to_cart", {"item": item})
            async with Client(MemoryTransport(workers[1], principal=principal)) as client:
                done = await client.call_tool("checkout")
                print(principal, done.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
