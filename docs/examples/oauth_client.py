"""Call an OAuth-protected MCP server as its user: python oauth_client.py URL

The first request is refused with 401; the client discovers the authorization server,
registers itself, opens the authorization page in your browser, and waits on a
loopback port for the page to send the browser back with a code. Needs snodo[auth].
"""

import asyncio
import sys

from snodo import Client
from snodo.oauth import BrowserUserAgent, OAuth

REDIRECT_URI = "http://127.0.0.1:8765/callback"  # a loopback port of this machine


async def main(url: str) -> None:
    # Registers dynamically; tokens are kept in memory for this run (storage= keeps them).
    oauth = OAuth(user_agent=BrowserUserAgent(), redirect_uri=REDIRECT_URI, client_name="demo")
    async with Client.http(url, auth=oauth) as client:
        for tool in await client.list_tools():
            print(tool.name)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
