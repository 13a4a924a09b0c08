"""A server behind bearer-token authentication, served by uvicorn: python http_auth.py [PORT]"""

import os
import sys
from collections.abc import Mapping

import uvicorn

from snodo import Context, Server
from snodo.transports import HttpApp, Unauthorized

server = Server("whoami", "1.0.0")

# Bearer token -> principal. A real deployment asks its identity provider instead.
TOKENS = {os.environ["WHOAMI_TOKEN"]: "alice"}


@server.tool
def whoami(ctx: Context) -> str:
    """The principal this request was authenticated as."""
    return ctx.principal or "anonymous"


def authenticate(headers: Mapping[str, str]) -> str | None:
    token = headers.get("authorization", "").removeprefix("Bearer ")
    if token not in TOKENS:
        raise Unauthorized('Bearer resource_metadata="https://api.example.com/.well-known/mcp"')
    return TOKENS[token]  # the principal: reaches ctx.principal and binds sealed state


app = HttpApp(server, authenticate=authenticate, allowed_hosts=["api.example.com"])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
