"""The server ``tests/transports/test_beside.py`` serves with ``snodo run``: a tool with a
mirrored header, two routes of its own, and (with ``TEST_REDIS``) a Redis replay guard
and task store that ``/readyz`` pings."""

from __future__ import annotations

import os
from typing import Any

from snodo.extensions.tasks import Tasks
from snodo.extensions.tasks.redis import RedisTaskStore
from snodo.server import Server, State
from snodo.server.routes import Request, Response
from snodo.stores import RedisGuard

REDIS = os.environ.get("TEST_REDIS")

server = Server(
    "beside",
    "1.0.0",
    state=State(secret=b"b" * 32, guard=RedisGuard(REDIS) if REDIS else False),
    extensions=[Tasks(RedisTaskStore(REDIS))] if REDIS else [],
)


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    }
)
def where(**arguments: Any) -> str:
    return f"in {arguments['region']}"


@server.tool
def echo(text: str) -> str:
    return text


@server.route("/version")
def version(request: Request) -> dict[str, Any]:
    return {"name": "beside", "query": request.query}


@server.route("/hook", methods=["POST"])
async def hook(request: Request) -> Response:
    return Response(201, b"got " + request.body, headers={"X-Hook": "yes"})
