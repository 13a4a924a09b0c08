"""``Annotated[T, Depends(fn)]``: sync, async and generator providers, each run once per
call, nested, hidden from the schema, closed after the handler whatever happened; a
provider's tool error is the call's answer and any other failure an internal error."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import pytest

from snodo import Context, Depends, Server, tool_error
from tests.support.wire import answer, request

EVENTS: list[str] = []


class Db:
    def __init__(self, name: str) -> None:
        self.name = name


def settings() -> dict[str, str]:
    EVENTS.append("settings")
    return {"dsn": "memory"}


async def user(ctx: Context) -> str:
    EVENTS.append("user")
    return ctx.principal or "anonymous"


def db(config: Annotated[dict[str, str], Depends(settings)]) -> Iterator[Db]:
    EVENTS.append(f"open {config['dsn']} in {threading.current_thread().name[:13]}")
    try:
        yield Db(config["dsn"])
    finally:
        EVENTS.append("close db")


async def session(
    handle: Annotated[Db, Depends(db)], who: Annotated[str, Depends(user)]
) -> AsyncIterator[str]:
    EVENTS.append("open session")
    try:
        yield f"{who}@{handle.name}"
    finally:
        EVENTS.append("close session")


def refuse() -> str:
    raise tool_error("not allowed here")


def broken() -> str:
    raise RuntimeError("the secret password is hunter2")


def build() -> Server:
    server = Server("deps", "1")

    @server.tool
    async def work(
        text: str,
        handle: Annotated[Db, Depends(db)],
        current: Annotated[str, Depends(session)],
        again: Annotated[dict[str, str], Depends(settings)],
    ) -> str:
        EVENTS.append("handler")
        if text == "fail":
            raise ValueError("handler failed")
        if text == "wait":
            await asyncio.sleep(10)
        return f"{text} {handle.name} {current} {again['dsn']}"

    @server.tool
    def refused(why: Annotated[str, Depends(refuse)]) -> str:
        return why

    @server.tool
    def crashing(why: Annotated[str, Depends(broken)]) -> str:
        return why

    @server.resource("deps://session")
    async def read(current: Annotated[str, Depends(session)]) -> str:
        return current

    return server


def call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return answer(server, request("tools/call", {"name": name, "arguments": arguments}))


def test_providers_run_once_nested_and_close_in_reverse_after_the_handler() -> None:
    EVENTS.clear()
    result = call(build(), "work", {"text": "hi"})["result"]
    assert result["content"] == [{"type": "text", "text": "hi memory anonymous@memory memory"}]
    assert EVENTS == [
        "settings",  # once, though db and the handler both ask for it
        "open memory in snodo-handler",  # a sync generator: in a thread
        "user",
        "open session",
        "handler",
        "close session",
        "close db",
    ]


def test_dependencies_are_not_arguments() -> None:
    tools = answer(build(), request("tools/list"))["result"]["tools"]
    work = next(t for t in tools if t["name"] == "work")
    assert work["inputSchema"] == {
        "additionalProperties": False,
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "type": "object",
    }


def test_providers_close_when_the_handler_fails_or_is_cancelled() -> None:
    EVENTS.clear()
    failed = call(build(), "work", {"text": "fail"})["result"]
    assert failed["isError"] is True
    assert EVENTS[-2:] == ["close session", "close db"]

    server = build()
    EVENTS.clear()

    async def cancelled() -> None:
        pending = asyncio.ensure_future(
            server.handle(request("tools/call", {"name": "work", "arguments": {"text": "wait"}}))
        )
        while "handler" not in EVENTS:
            await asyncio.sleep(0.01)
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending

    asyncio.run(cancelled())
    assert EVENTS[-2:] == ["close session", "close db"]


def test_a_providers_tool_error_is_the_answer_and_any_other_failure_internal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = build()
    refused = call(server, "refused", {})["result"]
    assert refused == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "not allowed here"}],
        "isError": True,
        "_meta": refused["_meta"],
    }
    with caplog.at_level(logging.WARNING, logger="snodo"):
        crashed = call(server, "crashing", {})
    assert crashed["error"] == {"code": -32603, "message": "Internal error"}
    assert "hunter2" not in str(crashed)
    logged = [r for r in caplog.records if "dependency broken failed" in r.getMessage()]
    assert logged and logged[0].levelno == logging.WARNING and logged[0].exc_info


def test_resources_take_dependencies_too() -> None:
    EVENTS.clear()
    read = answer(build(), request("resources/read", {"uri": "deps://session"}))["result"]
    assert read["contents"][0]["text"] == "anonymous@memory"
    assert EVENTS[-2:] == ["close session", "close db"]


def needs_text(text: str) -> str:
    return text


def asks_for_an_argument(value: Annotated[str, Depends(needs_text)]) -> str:
    return value


def test_a_provider_that_asks_for_an_argument_is_refused_at_registration() -> None:
    with pytest.raises(TypeError, match="neither the Context nor a dependency"):
        Server("deps", "1").add_tool(asks_for_an_argument)
