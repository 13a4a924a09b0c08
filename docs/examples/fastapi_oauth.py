"""An MCP server under /mcp in a FastAPI app, its users signed in at an OpenID provider
through the OAuth proxy, beside the app's own routes.

At the provider, register one client with the redirect URI {PUBLIC_URL}/mcp/auth/callback,
then, from the checkout:

    export PUBLIC_URL=http://127.0.0.1:8000 SNODO_AUTH_SECRET=$(openssl rand -hex 32)
    export OIDC_CONFIG_URL=https://id.example/.well-known/openid-configuration
    export OIDC_CLIENT_ID=... OIDC_CLIENT_SECRET=...
    uvicorn --app-dir docs/examples fastapi_oauth:app --port 8000

The MCP endpoint is {PUBLIC_URL}/mcp: `snodo auth login http://127.0.0.1:8000/mcp`.
"""

import os

from fastapi import FastAPI

from snodo import Context, Server
from snodo.auth import OIDCProxy
from snodo.transports import HttpApp

MCP_URL = os.environ["PUBLIC_URL"].rstrip("/") + "/mcp"  # where the app is mounted

server = Server(
    "notes",
    "1.0.0",
    authorization=OIDCProxy(
        config_url=os.environ["OIDC_CONFIG_URL"],
        client_id=os.environ["OIDC_CLIENT_ID"],
        client_secret=os.environ["OIDC_CLIENT_SECRET"],
        base_url=MCP_URL,  # the proxy's endpoints, and the provider's callback, under the mount
        resource=MCP_URL,  # the endpoint: the mount itself
    ),
)


@server.tool
def whoami(ctx: Context) -> str:
    """Who signed in: the provider's claims, as the proxy's token carries them."""
    token = ctx.access_token
    return f"{token.claims.get('name')} <{token.claims.get('email')}>"


mcp = HttpApp(server, path="/")  # "/": the endpoint is the mount, /mcp (no redirect)
app = FastAPI(lifespan=mcp.lifespan)  # also routes /mcp and the OAuth metadata to mcp


@app.get("/hello")
def hello() -> dict[str, str]:
    return {"hello": "from FastAPI"}


app.mount("/mcp", mcp)
