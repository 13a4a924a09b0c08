"""A server with an in-house extension (one custom method, one notification), for
tests/server/test_extensions.py:

    snodo run tests/server/extension_server.py:server --transport http --port PORT
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from snodo import Context, Server
from snodo.server.extensions import Extension

ECHO = Extension("com.example/echo", {"loud": True})


class Say(BaseModel):
    text: str = Field(min_length=1)
    times: int = 1


class Said(BaseModel):
    text: str
    declared: bool


@ECHO.method("echo/say", params=Say)
async def say(ctx: Context, params: Say) -> Said:
    """Repeat the text; tell the client it was heard first."""
    ECHO.notify(ctx, "echo/heard", {"length": len(params.text)})
    return Said(text=" ".join([params.text] * params.times), declared=ctx.client_supports(ECHO.id))


server = Server("echoes", "1.0.0", extensions=[ECHO])


@server.tool
def ping() -> str:
    """A core tool beside the extension."""
    return "pong"
