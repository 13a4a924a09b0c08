"""An ``input_required(...)`` built and dropped (not returned) is a warning at once,
naming the handler and the line that built it; one returned, and so sent on, is not.
The handler that forgot to return it went on as if the user had agreed."""

from __future__ import annotations

import asyncio
import gc
import logging
import secrets
from pathlib import Path

import pytest

from snodo import Client, Server, elicitation
from snodo.client.transports import MemoryTransport
from snodo.core.context import Context
from snodo.core.result import MISSING, InputRequired, input_required

CONFIRM = elicitation.form(
    "Delete the note?",
    {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]},
)
deleted: list[str] = []


def _server() -> Server:
    server = Server("notes", "1.0.0", state_secret=secrets.token_bytes(32))

    @server.tool
    def forgetful(title: str, ctx: Context) -> str:
        if elicitation.response(ctx, "ok", CONFIRM) is MISSING:
            input_required({"ok": CONFIRM})  # not returned: nobody is asked
        deleted.append(title)
        return f"deleted {title}"

    @server.tool
    def careful(title: str, ctx: Context) -> str | InputRequired:
        if elicitation.response(ctx, "ok", CONFIRM) is MISSING:
            return input_required({"ok": CONFIRM})
        deleted.append(title)
        return f"deleted {title}"

    return server


FORGOTTEN_LINE = next(
    number
    for number, line in enumerate(Path(__file__).read_text().splitlines(), 1)
    if line.strip().endswith("# not returned: nobody is asked")
)


async def _call(tool: str) -> str:
    def user(params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"ok": True}}

    async with Client(MemoryTransport(_server()), elicitation=user) as client:
        result = await client.call_tool(tool, {"title": "groceries"})
        return str(result.content[0].text)


def _dropped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "built input_required" in r.getMessage()]


def test_a_dropped_question_warns_naming_handler_and_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="snodo"):
        assert asyncio.run(_call("forgetful")) == "deleted groceries"
    assert _dropped(caplog) == [
        f"_server.<locals>.forgetful ({__file__}, line {FORGOTTEN_LINE}) built"
        " input_required(...) and dropped it: the question was never asked; return it to ask"
    ]


def test_a_returned_question_is_asked_and_does_not_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="snodo"):
        assert asyncio.run(_call("careful")) == "deleted groceries"
        gc.collect()
    assert _dropped(caplog) == []


def test_the_warning_comes_when_it_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    """At once: before the next statement runs, not at some later collection."""
    with caplog.at_level(logging.WARNING, logger="snodo"):
        input_required({"ok": CONFIRM})
        seen = len(_dropped(caplog))
    assert seen == 1
