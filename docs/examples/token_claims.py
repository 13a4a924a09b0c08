"""A handler that reads the claims of the caller's verified access token.
python token_claims.py
"""

import asyncio
import time

import httpx

from snodo import Client, Server
from snodo.auth import AccessToken, InvalidToken, ProtectedResource
from snodo.client.transports import HttpTransport
from snodo.server import Token
from snodo.transports import HttpApp


class KnownTokens:
    """Stands in for JwtVerifier here: one token, known in advance."""

    async def verify(self, token: str) -> AccessToken:
        if token != "token-of-ada":
            raise InvalidToken("unknown token")
        claims = {"sub": "ada", "email": "ada@example.com", "tenant": "acme", "roles": ["editor"]}
        return AccessToken(
            "ada",
            frozenset({"notes"}),
            client_id="notes-app",
            expires_at=time.time() + 300,
            claims=claims,
        )


resource = ProtectedResource("http://localhost/mcp", ["https://auth.example.com"], KnownTokens())
server = Server("notes", "1.0.0", authorization=resource)


@server.tool
def my_tenant(token: Token) -> str:
    if token is None:  # stdio, or HTTP without OAuth
        return "no tenant"
    roles = ", ".join(token.claims.get("roles", []))
    return f"{token.claims.get('email')} in {token.claims.get('tenant')} ({roles})"


async def main() -> None:
    app = HttpApp(server)  # served in-process here; `snodo run` serves it the same way
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app)) as http:
        bearer = {"authorization": "Bearer token-of-ada"}
        transport = HttpTransport("http://localhost/mcp", headers=bearer, client=http)
        async with Client(transport) as client:
            result = await client.call_tool("my_tenant", {})
            print(result.content[0].text)


if __name__ == "__main__":
    asyncio.run(main())
