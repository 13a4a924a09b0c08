"""DPoP-bound tokens (RFC 9449), both sides, in one process: python oauth_dpop.py

The server takes a token bound to a client's key (its ``cnf.jkt``) only with a proof
signed by that key, made for this very request, used once, and carrying the server's
current nonce. The client (``OAuth(dpop=...)``) makes the proofs, and when the server
asks for its nonce, sends the request once more with it. A copied token or proof is
worth nothing. Needs snodo[auth].
"""

import asyncio

import httpx

from snodo.auth import AccessToken, DPoP, InvalidToken, ProtectedResource
from snodo.client import Client
from snodo.client.transports import HttpTransport
from snodo.oauth import DPoPKey, MemoryTokenStorage, OAuth, Tokens
from snodo.server import Server
from snodo.transports import HttpApp

MCP = "http://localhost:8000/mcp"
ISSUER = "https://auth.example.com"
KEY = DPoPKey()  # the client's key pair (ES256); the private half never leaves the client
TOKEN = "token-issued-to-ada"  # what the authorization server issued, bound to KEY


class BoundTokens:
    """The token verifier: an authorization server's JWT would carry the same claims."""

    async def verify(self, token: str) -> AccessToken:
        if token != TOKEN:
            raise InvalidToken("unknown token")
        return AccessToken("ada", frozenset(), ISSUER, claims={"cnf": {"jkt": KEY.thumbprint}})


# nonce=True: every proof must carry the server's current nonce (rotated every 5 minutes).
proofs = DPoP(nonce=True)
server = Server(
    "reports", "1.0.0", authorization=ProtectedResource(MCP, [ISSUER], BoundTokens(), dpop=proofs)
)


@server.tool
def report() -> str:
    """Today's report."""
    return "ready"


async def main() -> None:
    sent: list[httpx.Request] = []

    async def keep(request: httpx.Request) -> None:
        sent.append(request)

    app = httpx.ASGITransport(HttpApp(server))
    # The client holds the bound token and its key, as a sign-in with dpop=KEY leaves them.
    storage = MemoryTokenStorage()
    storage.tokens = Tokens(TOKEN, ISSUER, token_type="DPoP", dpop_key=KEY.private_jwk())
    oauth = OAuth(storage=storage, dpop=KEY)
    http = httpx.AsyncClient(transport=app, auth=oauth, event_hooks={"request": [keep]})
    async with Client(HttpTransport(MCP, client=http)) as client:
        result = await client.call_tool("report", {})
        print("report:", result.content[0].text, f"({len(sent)} requests)")

    last = sent[-1]
    async with httpx.AsyncClient(transport=app) as attacker:  # what someone who saw it can do

        async def again(headers: dict[str, str]) -> str:
            answer = await attacker.post(MCP, content=last.content, headers=headers)
            return f"{answer.status_code} {answer.json()['error']}"

        copied = dict(last.headers)
        print("the same request again:", await again(copied))
        print(
            "the token as a bearer token:",
            await again({**copied, "authorization": f"Bearer {TOKEN}"}),
        )
        nonce = proofs.nonces.current()  # no secret: the server hands it to anyone
        other = DPoPKey().proof("POST", MCP, access_token=TOKEN, nonce=nonce)
        print("a proof by another key:", await again({**copied, "dpop": other}))


if __name__ == "__main__":
    asyncio.run(main())
