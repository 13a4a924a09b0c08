"""``Server(mask_errors=True)``: a tool's untyped exception (a SQL error, a path) reaches
the client as a generic message and only the log has the detail; without it, as by
default under ``snodo dev``, the client reads the exception's text. Inline and as a
task alike; a ``tool_error`` the tool means the client to read is never masked."""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

import pytest

from snodo import Client, Server
from snodo.client.transports import MemoryTransport
from snodo.core.context import Context
from snodo.core.result import tool_error
from snodo.extensions.tasks import MemoryTaskStore, Tasks, TasksClient, background

DETAIL = "no such table: notes (SELECT * FROM notes WHERE owner = 'ada')"


def _server(mask: bool) -> Server:
    server = Server(
        "notes",
        "1.0.0",
        state_secret=secrets.token_bytes(32),
        mask_errors=mask,
        extensions=[Tasks(MemoryTaskStore())],
    )

    @server.tool
    def delete(title: str) -> str:
        raise RuntimeError(DETAIL)

    @server.tool
    def refuse(title: str) -> str:
        raise tool_error(f"no note called {title}")

    @server.tool(task="required")
    def purge(title: str) -> Any:
        async def work(ctx: Context) -> str:
            raise RuntimeError(DETAIL)

        return background(work)

    return server


async def _texts(server: Server) -> list[str]:
    async with Client(MemoryTransport(server)) as client:
        TasksClient(client)  # the task tool needs a client that declares tasks
        texts = []
        for tool in ("delete", "refuse", "purge"):
            result = await client.call_tool(tool, {"title": "groceries"})
            assert result.is_error
            texts.append(result.content[0].text)
        return texts


def test_masked_the_client_reads_a_generic_message(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        texts = asyncio.run(_texts(_server(True)))
    assert texts[:2] == [
        "Tool delete failed; the server's log has the details",
        "no note called groceries",
    ]
    assert texts[2].startswith("Task ") and texts[2].endswith(
        " failed; the server's log has the details"
    )
    assert not any(DETAIL in text for text in texts)
    logged = [r for r in caplog.records if r.exc_info and DETAIL in str(r.exc_info[1])]
    assert logged, "the detail must reach the log"


def test_unmasked_by_default() -> None:
    assert asyncio.run(_texts(_server(False))) == [DETAIL, "no note called groceries", DETAIL]
