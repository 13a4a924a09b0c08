"""examples/preferences.py's server inside a Starlette app, under the prefix /api, with a
lifespan of the app's own around the server's.

From the checkout:

    PYTHONPATH=examples uvicorn --app-dir docs/examples starlette_app:app --port 8000

The MCP endpoint is http://127.0.0.1:8000/api/mcp: the app's path below the mount.
"""

import contextlib
from collections.abc import AsyncIterator

from preferences import server  # examples/preferences.py: any Server will do
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from snodo.transports import HttpApp

mcp = HttpApp(server)  # its endpoint path, /mcp, is read below the mount's /api
opened: list[str] = []


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    opened.append("the app's own resources")  # what the app opens itself
    async with mcp.lifespan(app):
        yield
    opened.clear()


async def status(request: Request) -> JSONResponse:
    return JSONResponse({"opened": opened, "tools": len(server.registry.tools)})


app = Starlette(
    routes=[Route("/status", status), Mount("/api", app=mcp)],
    lifespan=lifespan,
)
