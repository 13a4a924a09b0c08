"""A rate limit, a response cache and a size bound, given to the server once.
python middleware.py
"""

import asyncio

from snodo import Client, RequestError, Server
from snodo.client.transports import MemoryTransport
from snodo.middleware import RateLimit, ResponseCache, ResultLimit

ran: list[str] = []
server = Server(
    "quotes",
    "1.0.0",
    middleware=[
        # 2 calls a second per caller, 3 at once; store="redis://..." for every worker.
        RateLimit(2, 1.0, burst=3, tools=["quote"]),
        ResponseCache(ttl=60),  # read-only tools, lists and reads, per caller
        ResultLimit(400),
    ],
)


@server.tool(annotations={"readOnlyHint": True})
def quote(symbol: str) -> str:
    """The last price of a stock."""
    ran.append(symbol)
    return f"{symbol}: 101.5"


@server.tool
def history(symbol: str) -> str:
    """Every price of a stock today: long."""
    return ", ".join(
        f"{symbol}@{hour}:{minute:02} 101.{hour}"
        for hour in range(9, 17)
        for minute in range(0, 60, 15)
    )


async def main() -> None:
    async with Client(MemoryTransport(server, principal="alice")) as client:
        for _ in range(4):
            try:
                found = await client.call_tool("quote", {"symbol": "ACME"})
                print(found.content[0].text)
            except RequestError as refused:  # the wait varies: the hint says how long
                print(refused.code, refused.message.split(":")[0], sorted(refused.data))
        print("the handler ran", len(ran), "time(s)")
        long = await client.call_tool("history", {"symbol": "ACME"})
        print(long.content[0].text.splitlines()[-1])


if __name__ == "__main__":
    asyncio.run(main())
