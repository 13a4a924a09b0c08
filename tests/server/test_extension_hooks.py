"""An extension's hooks around tool calls, on listen streams, on the observer and on
readiness (``snodo.server.extensions``), on the wire: a call ``before`` refuses is
answered with its error and the handler never runs; ``after`` changes the value the
result is made of, or answers the call itself; a listen member is honoured as the
extension says; the observer and the Redis URLs reach it and the readiness probe."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from snodo.core.context import Context
from snodo.core.errors import InvalidParams, McpError
from snodo.core.observe import QUIET, Observer, Quiet
from snodo.extensions.tasks import background
from snodo.server import Server
from snodo.server.extensions import Answered, Extension
from snodo.server.routes import redis_dependencies
from tests.support.wire import request

LOUD = "com.example/loud"
"""The extension a client declares to have its answers shouted."""


class NotToday(McpError):
    code = -32042


class Shout:
    """Refuses ``forbidden``; upper-cases text for a client that declared ``LOUD``;
    answers ``answered`` itself."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def before(self, tool: Any, ctx: Context) -> None:
        self.ran.append(f"before {tool.name}")
        if tool.name == "forbidden":
            raise NotToday("Not today")

    async def after(
        self, tool: Any, ctx: Context, value: Any, finish: Callable[[Any], dict[str, Any]]
    ) -> Any:
        self.ran.append(f"after {tool.name}")
        if tool.name == "answered":
            return Answered({"content": [], "_meta": {"com.example/by": "hook"}})
        if tool.name == "finished":  # the call's result as its revision shapes it
            return Answered({**finish(f"{value}, finished"), "_meta": {"com.example/by": "hook"}})
        if isinstance(value, str) and ctx.client_supports(LOUD):
            return value.upper()
        return value


class Echoes:
    """Honours ``echoes``: a list of strings, kept upper-cased; refuses anything else."""

    key = "echoes"

    def honour(self, ctx: Context, value: Any) -> Any:
        if not isinstance(value, list):
            raise InvalidParams("notifications.echoes: a list")
        return [str(item).upper() for item in value] or None


class Loud(Extension):
    def __init__(self) -> None:
        super().__init__(LOUD)
        self.shout = Shout()
        self.calls = self.shout
        self.listening = Echoes()
        self.observers: list[Observer] = []

    def observe(self, observer: Observer) -> None:
        self.observers.append(observer)

    def dependencies(self) -> dict[str, str]:
        return {"echo store": "redis://echoes.invalid:6379/0"}


def loud_server() -> tuple[Server, Loud]:
    server = Server("h", "1")
    extension = Loud()
    server.add_extension(extension)
    ran: list[str] = []

    @server.tool
    def greet(name: str) -> str:
        ran.append("greet")
        return f"hello {name}"

    @server.tool
    def forbidden() -> str:
        ran.append("forbidden")
        return "never"

    @server.tool
    def answered() -> str:
        return "not this"

    @server.tool
    def finished() -> str:
        return "made"

    extension.shout.ran = ran  # one log: the handlers' and the hook's turns in order
    return server, extension


def reply(server: Server, method: str, params: dict[str, Any], **meta: Any) -> dict[str, Any]:
    response = asyncio.run(server.handle(request(method, params, **meta))).response
    assert response is not None
    return response


LOUD_CLIENT = {"extensions": {LOUD: {}}}


def test_after_turns_the_value_the_result_is_made_of() -> None:
    server, extension = loud_server()
    plain = reply(server, "tools/call", {"name": "greet", "arguments": {"name": "ada"}})
    assert plain["result"]["content"] == [{"type": "text", "text": "hello ada"}]
    loud = reply(
        server,
        "tools/call",
        {"name": "greet", "arguments": {"name": "ada"}},
        capabilities=LOUD_CLIENT,
    )
    assert loud["result"]["content"] == [{"type": "text", "text": "HELLO ADA"}]
    assert extension.shout.ran[:3] == ["before greet", "greet", "after greet"]


def test_before_refuses_a_call_and_its_handler_never_runs() -> None:
    server, extension = loud_server()
    refused = reply(server, "tools/call", {"name": "forbidden", "arguments": {}})
    assert refused["error"] == {"code": -32042, "message": "Not today"}
    assert extension.shout.ran == ["before forbidden"]


def test_after_may_answer_the_call_itself() -> None:
    server, _ = loud_server()
    answered = reply(server, "tools/call", {"name": "answered", "arguments": {}})
    assert answered["result"]["content"] == []
    assert answered["result"]["_meta"]["com.example/by"] == "hook"
    made = reply(server, "tools/call", {"name": "finished", "arguments": {}})
    assert made["result"]["content"] == [{"type": "text", "text": "made, finished"}]
    assert made["result"]["_meta"]["com.example/by"] == "hook"


def test_a_listen_member_is_honoured_as_the_extension_says() -> None:
    server, _ = loud_server()

    async def listen(notifications: dict[str, Any]) -> Any:
        message = request("subscriptions/listen", {"notifications": notifications}, id=9)
        return await server.handle(message)

    refused = asyncio.run(listen({"echoes": "not a list"})).response
    assert refused is not None and refused["error"]["code"] == -32602
    opened = asyncio.run(listen({"echoes": ["a", "b"]}))
    assert opened.response is None  # a stream, held open with what it honours
    [subscription] = server.subscriptions._open
    assert subscription.honoured == {"echoes": ["A", "B"]}


def test_the_observer_and_the_dependencies_reach_the_extension() -> None:
    server, extension = loud_server()
    assert extension.observers == [QUIET]  # told the server's observer when installed
    server.observer = observer = Quiet()
    assert extension.observers[-1] is observer
    assert redis_dependencies(server) == {"echo store": "redis://echoes.invalid:6379/0"}


def test_background_work_on_a_server_without_the_tasks_extension_is_an_internal_error() -> None:
    server = Server("bare", "1")

    @server.tool(task="optional")
    async def slow() -> Any:
        async def work(ctx: Context) -> str:
            return "done"

        return background(work)

    answer = reply(server, "tools/call", {"name": "slow", "arguments": {}})
    assert answer["error"] == {"code": -32603, "message": "Internal error"}
