"""Call an OAuth-protected MCP server as its user: python oauth_client.py URL

The first request is refused with 401; the client discovers the authorization server,
registers itself, opens the authorization page in your browser, and waits on a
loopback port for the page to send the browser back with a code. Needs snodo[auth].
"""

import asyncio
import sys
import webbrowser
from collections.abc import Callable
from urllib.parse import urlsplit

from snodo import Client
from snodo.oauth import OAuth

REDIRECT_URI = "http://127.0.0.1:8765/callback"  # a loopback port of this machine


class BrowserUserAgent:
    """Sends the user to the authorization page in their browser, and returns the
    address the page redirects the browser back to (the redirect URI, with a code)."""

    def __init__(
        self, open_page: Callable[[str], object] = webbrowser.open, timeout: float = 300
    ) -> None:
        self.open_page = open_page
        self.timeout = timeout

    async def authorize(self, authorization_url: str, redirect_uri: str) -> str:
        back = urlsplit(redirect_uri)
        arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def redirected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            request_line = (await reader.readline()).decode("latin-1").split()
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n")
            writer.write(b"\r\nDone: you can close this window.\n")
            await writer.drain()
            writer.close()
            target = request_line[1] if len(request_line) == 3 else ""
            if target.startswith(back.path) and not arrived.done():
                arrived.set_result(f"{back.scheme}://{back.netloc}{target}")

        listener = await asyncio.start_server(redirected, back.hostname, back.port)
        async with listener:
            self.open_page(authorization_url)
            return await asyncio.wait_for(arrived, self.timeout)


async def main(url: str) -> None:
    # Registers dynamically; tokens are kept in memory for this run (storage= keeps them).
    oauth = OAuth(user_agent=BrowserUserAgent(), redirect_uri=REDIRECT_URI, client_name="demo")
    async with Client.http(url, auth=oauth) as client:
        for tool in await client.list_tools():
            print(tool.name)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
