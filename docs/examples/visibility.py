"""Each caller shown what it may use: tags, enable/disable, visible= on the token's roles,
a caller's own choice, and a tool offered under a new shape.
python visibility.py
"""

import asyncio

from snodo import Client, Context, RequestError, Server
from snodo.client.transports import MemoryTransport

server = Server("ops", "1.0.0")


def is_admin(ctx: Context) -> bool:
    """Whether the caller's token carries the admin role (None without OAuth: local)."""
    token = ctx.access_token
    return token is None or "admin" in token.claims.get("roles", ())


@server.tool(tags={"public"})
def status(service: str) -> str:
    """Whether a service is up."""
    return f"{service} is up"


@server.tool(tags={"admin"}, visible=is_admin)
def restart(service: str, region: str) -> str:
    """Restart a service in a region."""
    return f"restarted {service} in {region}"


@server.tool(tags={"internal"})
def debug_dump() -> str:
    """Everything the server holds."""
    return "..."


@server.tool(tags={"public"})
async def quiet_mode(ctx: Context) -> str:
    """Hide the admin tools from me (my own choice, kept for me across requests)."""
    await ctx.disable(tags="admin")
    return "admin tools hidden for you"


# One region only here: the model never sees nor fills the argument.
server.transform("restart", name="restart_eu", hide={"region": "eu-west"}, keep=True)
server.disable(tags={"internal"})  # for everyone, until server.enable(...)


async def names(client: Client) -> str:
    listed = await client.list_tools()
    return f"{[tool.name for tool in listed]} ({listed.cache_scope})"


async def main() -> None:
    async with Client(MemoryTransport(server, principal="ada")) as ada:
        print("ada sees", await names(ada))
        print((await ada.call_tool("restart_eu", {"service": "db"})).content[0].text)
        print((await ada.call_tool("quiet_mode")).content[0].text)
        print("ada sees", await names(ada))
        try:
            await ada.call_tool("debug_dump")
        except RequestError as missing:  # as a tool that does not exist
            print(missing)
    async with Client(MemoryTransport(server, principal="bob")) as bob:
        print("bob sees", await names(bob))


if __name__ == "__main__":
    asyncio.run(main())
