"""An MCP server under /mcp in a Starlette app with a lifespan of its own, its users
signed in at an OpenID provider through the OAuth proxy.

Configured as docs/examples/fastapi_oauth.py is, then:

    uvicorn --app-dir docs/examples starlette_oauth:app --port 8000
"""

import contextlib
import os
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from snodo import Context, Server
from snodo.auth import OIDCProxy
from snodo.transports import HttpApp

MCP_URL = os.environ["PUBLIC_URL"].rstrip("/") + "/mcp"

server = Server(
    "notes",
    "1.0.0",
    authorization=OIDCProxy(
        config_url=os.environ["OIDC_CONFIG_URL"],
        client_id=os.environ["OIDC_CLIENT_ID"],
        client_secret=os.environ["OIDC_CLIENT_SECRET"],
        base_url=MCP_URL,
        resource=MCP_URL,
    ),
)


@server.tool
def whoami(ctx: Context) -> str:
    token = ctx.access_token
    return f"{token.claims.get('name')} <{token.claims.get('email')}>"


mcp = HttpApp(server, path="/")


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    async with mcp.lifespan(app):  # given the app: it routes /mcp and the metadata too
        yield


async def status(request: Request) -> JSONResponse:
    return JSONResponse({"tools": len(server.registry.tools)})


app = Starlette(routes=[Route("/status", status), Mount("/mcp", app=mcp)], lifespan=lifespan)
