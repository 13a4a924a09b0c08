"""Users sign in with GitHub: the server is its clients' authorization server.
python oauth_proxy.py   (serve it with: snodo run oauth_proxy.py:server --transport http)
"""

import asyncio
import os

import httpx

from snodo import Context, Server
from snodo.auth import GitHubProxy
from snodo.transports import HttpApp

server = Server(
    "notes",
    "1.0.0",
    authorization=GitHubProxy(
        client_id=os.environ.get("GITHUB_CLIENT_ID", "Iv1.0123456789abcdef"),
        client_secret=os.environ.get("GITHUB_CLIENT_SECRET", "from the OAuth app's page"),
        base_url="http://localhost:8000",  # GitHub calls back to {base_url}/auth/callback
        secret=os.environ.get("SNODO_AUTH_SECRET", "32 random bytes, the same on every worker"),
    ),
)


@server.tool
def whoami(ctx: Context) -> str:
    """Who signed in: the GitHub user's claims ride in the server's own token."""
    token = ctx.access_token
    return f"{token.claims['login']} <{token.claims.get('email')}>" if token else "nobody"


async def main() -> None:
    """What an MCP client finds before it signs in (served in-process here)."""
    app = HttpApp(server)
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8000") as http:
        resource = (await http.get("/.well-known/oauth-protected-resource/mcp")).json()
        print("authorization server:", resource["authorization_servers"][0])
        found = (await http.get("/.well-known/oauth-authorization-server")).json()
        for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
            print(f"{name}: {found[name]}")
        unsigned = await http.post("/mcp", json={})
        print(unsigned.status_code, unsigned.json()["error"])


if __name__ == "__main__":
    asyncio.run(main())
