"""Call an MCP server with the company's sign-in: python oauth_enterprise.py URL

Enterprise-managed authorization (the ID-JAG of ext-auth): the user signed in to this
client at the company's identity provider, which gave it an ID token. The client
exchanges that ID token at the provider for a grant naming the MCP server (RFC 8693),
and presents the grant to the MCP server's authorization server (the jwt-bearer grant,
RFC 7523): no browser, no consent page; the provider's policy decides. Configured by
the environment; needs snodo[auth].
"""

import asyncio
import os
import sys
from pathlib import Path

from snodo import Client
from snodo.oauth import CrossAppAccess, OAuth

IDP_TOKEN_ENDPOINT = os.environ.get("IDP_TOKEN_ENDPOINT", "https://acme.okta.com/oauth2/v1/token")
IDP_CLIENT_ID = os.environ.get("IDP_CLIENT_ID", "desk-app")  # this client, at the provider
IDP_CLIENT_SECRET = os.environ.get("IDP_CLIENT_SECRET", "")
MCP_CLIENT_ID = os.environ.get("MCP_CLIENT_ID", "desk-app-at-reports")  # at the MCP server
ID_TOKEN_FILE = os.environ.get("ID_TOKEN_FILE", "id_token.jwt")  # where the sign-in left it


async def main(url: str) -> None:
    grant = CrossAppAccess(
        token_endpoint=IDP_TOKEN_ENDPOINT,
        id_token=lambda: Path(ID_TOKEN_FILE).read_text(),  # read when a grant is needed
        client_id=IDP_CLIENT_ID,
        client_secret=IDP_CLIENT_SECRET or None,
    )
    # dpop=True: the MCP server's token is bound to a key this process holds.
    oauth = OAuth(grant="jwt_bearer", client_id=MCP_CLIENT_ID, assertion=grant, dpop=True)
    async with Client.http(url, auth=oauth) as client:
        for tool in await client.list_tools():
            print(tool.name)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
