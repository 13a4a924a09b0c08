"""The client's response cache: a read kept while its hint says it is fresh, and made
stale by the server's notification. python cache.py
"""

import asyncio
import contextlib

from snodo import CacheHint, Caching, Client, Server
from snodo.client.transports import MemoryTransport

server = Server("counter", "1.0.0", caching=Caching(read=CacheHint(ttl_ms=60_000, scope="public")))
visits = [0]


@server.resource("count://visits", mime_type="text/plain")
def count() -> str:
    """How many times the server was asked: a cached read does not ask."""
    visits[0] += 1
    return str(visits[0])


async def read(client: Client) -> None:
    result = await client.read_resource("count://visits")
    print(result.contents[0].uri, result.contents[0].text)


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        await read(client)
        await read(client)  # fresh for a minute: answered from the cache
        listening = client.listen(resourceSubscriptions=["count://visits"])
        async with contextlib.aclosing(listening) as stream:  # type: ignore[type-var]
            await anext(stream)  # the server acknowledged the subscription
            server.notify_resource_updated("count://visits")
            await anext(stream)  # the update: what the cache kept is stale now
        await read(client)
        print("hits:", client.cache.hits if client.cache else 0)


if __name__ == "__main__":
    asyncio.run(main())
