"""A web app that answers no MCP, for the command line's mistakes: a 401 with no OAuth
metadata (``/locked``), a redirect (``/moved``), and 404 anywhere else."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

METHODS = ["GET", "POST", "DELETE"]


async def locked(request: Request) -> Response:
    challenge = {"www-authenticate": "Bearer"}  # no resource_metadata, nothing well-known
    return JSONResponse({"error": "invalid_token"}, status_code=401, headers=challenge)


async def moved(request: Request) -> Response:
    return RedirectResponse("/mcp/", status_code=307)  # a framework's trailing slash


app = Starlette(
    routes=[Route("/locked", locked, methods=METHODS), Route("/moved", moved, methods=METHODS)]
)
