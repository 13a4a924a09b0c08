"""Dependencies: python dependencies.py"""

import asyncio
from collections.abc import Iterator
from typing import Annotated

from snodo import Client, Context, Depends, Server, tool_error
from snodo.client.transports import MemoryTransport

server = Server("accounts", "1.0.0")
BALANCES = {"ada": 120, "bob": 0}


def current_user(ctx: Context) -> str:
    """Who is asking: here the transport's principal, else a guest."""
    return ctx.principal or "ada"


def account(user: Annotated[str, Depends(current_user)]) -> Iterator[dict[str, int]]:
    """A generator: the code after yield runs once the handler is done, whatever happened."""
    if user not in BALANCES:
        raise tool_error(f"{user} has no account")
    print(f"open {user}'s account")
    try:
        yield {"balance": BALANCES[user]}
    finally:
        print(f"close {user}'s account")


@server.tool
def balance(
    user: Annotated[str, Depends(current_user)],
    ledger: Annotated[dict[str, int], Depends(account)],
) -> str:
    """The caller's balance. Neither parameter is an argument: the schema has none."""
    return f"{user}: {ledger['balance']}"


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        tool = (await client.list_tools())[0]
        print(tool.input_schema.model_dump(by_alias=True).get("properties", {}))
        print((await client.call_tool("balance")).content[0].text)
    async with Client(MemoryTransport(server, principal="eve")) as client:
        refused = await client.call_tool("balance")
        print(refused.is_error, refused.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
