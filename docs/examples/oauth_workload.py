"""Call an MCP server as a workload: python oauth_workload.py URL

Workload identity federation: the platform (Kubernetes, a CI system, a cloud) gives
this workload a short-lived token signed by the platform, in a file it renews. The
client presents it to the MCP server's authorization server with the jwt-bearer grant
(RFC 7523), which trusts the platform's issuer: no secret is configured anywhere. The
file is read afresh for every token request. Needs snodo[auth].
"""

import asyncio
import os
import sys

from snodo import Client
from snodo.oauth import OAuth, WorkloadIdentity

# A Kubernetes projected service account token, say, with the authorization server as audience.
TOKEN_FILE = os.environ.get("WORKLOAD_TOKEN_FILE", "/var/run/secrets/tokens/mcp-token")
CLIENT_ID = os.environ.get("MCP_CLIENT_ID", "nightly-report")


async def main(url: str) -> None:
    oauth = OAuth(
        grant="jwt_bearer",
        client_id=CLIENT_ID,
        assertion=WorkloadIdentity(file=TOKEN_FILE),  # or env="MCP_WORKLOAD_TOKEN"
    )
    async with Client.http(url, auth=oauth) as client:
        for tool in await client.list_tools():
            print(tool.name)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
