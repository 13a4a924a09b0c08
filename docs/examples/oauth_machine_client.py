"""Call an OAuth-protected MCP server as a machine: python oauth_machine_client.py URL KEY

No person and no browser: the client proves who it is to the authorization server
with a short JWT signed by its private key (private_key_jwt; KEY is the key's PEM
file) and gets its token with the client credentials grant. The authorization server
knows the client by its id and the public half of the key. Needs snodo[auth].
"""

import asyncio
import sys
from pathlib import Path

from snodo import Client
from snodo.oauth import ClientKey, OAuth

CLIENT_ID = "nightly-report"  # the id the authorization server's operator gave this client


async def main(url: str, key_file: str) -> None:
    key = ClientKey(Path(key_file).read_text(), key_id="nightly-report-1")
    oauth = OAuth(grant="client_credentials", client_id=CLIENT_ID, client_key=key)
    async with Client.http(url, auth=oauth) as client:
        for tool in await client.list_tools():
            print(tool.name)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
