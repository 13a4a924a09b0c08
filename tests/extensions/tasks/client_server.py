"""The server the client's task tests drive: in process, or as ``snodo run`` workers.

    python -m snodo run tests/extensions/tasks/client_server.py:server --transport http --port PORT

Workers started with the same ``SNODO_TASK_STORE`` (``sqlite:///PATH``) and
``SNODO_STATE_SECRET`` (hex) answer for each other's tasks and flows.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from typing import Any

from snodo.asking import elicitation
from snodo.asking.elicitation import Accepted
from snodo.core.context import Context
from snodo.core.errors import InternalError
from snodo.core.result import MISSING, InputRequired, input_required
from snodo.extensions.tasks import Tasks, background, task_store
from snodo.server import Server

__all__ = ["CITY", "make", "server"]

CITY = elicitation.form(
    "City?", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
)
NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)


def make(store_url: str = "memory:", secret: bytes | None = None) -> Server:
    """A server whose task tools cover every way a task ends."""
    built = Server(
        "task-client-tests",
        "1.0.0",
        state_secret=secret or secrets.token_bytes(32),
        extensions=[Tasks(task_store(store_url), poll_interval_ms=20, watch_interval=0.01)],
    )

    @built.tool(task="optional")
    def forecast() -> Any:
        """A task that asks for a city through tasks/get and tasks/update."""

        async def work(ctx: Context) -> str | InputRequired:
            answer = elicitation.response(ctx, "city", CITY)
            if answer is MISSING:
                return input_required({"city": CITY})
            assert isinstance(answer, Accepted)
            return f"Sunny in {answer.content['city']}"

        return background(work)

    @built.tool(task="required")
    def greeting(ctx: Context) -> Any:
        """An MRTR round before the task is created, then the task."""
        answer = elicitation.response(ctx, "name", NAME)
        if answer is MISSING:
            return input_required({"name": NAME})
        name = answer.content["name"] if isinstance(answer, Accepted) else "stranger"

        async def work(task: Context) -> str:
            return f"Hello, {name}!"

        return background(work)

    @built.tool(task="required")
    def forever() -> Any:
        """A task that only ends when cancelled."""

        async def work(ctx: Context) -> str:
            await asyncio.sleep(3600)
            return "never"

        return background(work)

    @built.tool(task="optional")
    def broken() -> Any:
        """A task that ends in a JSON-RPC error (failed)."""

        async def work(ctx: Context) -> str:
            raise InternalError("disk on fire")

        return background(work)

    @built.tool
    def capabilities(ctx: Context) -> dict[str, Any]:
        """The client capabilities this request arrived with, as the server saw them."""
        return dict(ctx.client_capabilities)

    return built


def _secret() -> bytes | None:
    hexed = os.environ.get("SNODO_STATE_SECRET")
    return bytes.fromhex(hexed) if hexed else None


server = make(os.environ.get("SNODO_TASK_STORE") or "memory:", _secret())
