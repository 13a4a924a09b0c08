"""A tool that needs the user signed in at a web page first: url_required.
python sign_in.py
"""

import asyncio
from typing import Any

from snodo import Client, Server, elicitation, url_required
from snodo.client.transports import MemoryTransport

server = Server("drive", "1.0.0")
SIGNED_IN: set[str] = set()  # kept by the web page the user signs in on


@server.tool
def files(account: str) -> object:
    """The account's files, once its owner has signed in."""
    if account not in SIGNED_IN:
        page = f"https://drive.example.com/sign-in?account={account}"
        return url_required(elicitation.url(f"Sign in to {account}'s drive", page))
    return "notes.txt, plan.md"


# -- a client playing the user, who signs in when shown the page ------------------------


async def browser(params: dict[str, Any]) -> dict[str, Any]:
    print("open:", params["url"])
    SIGNED_IN.add("ada")  # what the page records once the user is through
    return {"action": "accept"}


async def main() -> None:
    async with Client(MemoryTransport(server), url_elicitation=browser) as client:
        result = await client.call_tool("files", {"account": "ada"})
        print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
