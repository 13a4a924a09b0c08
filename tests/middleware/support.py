"""What the middleware tests share: a server's answers in process, in either era."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits
from tests.support.wire import request


def synchronous(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test on its own loop, bounded."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), 60))

    return run


async def ask(
    server: Server, method: str, params: dict[str, Any] | None = None, **options: Any
) -> dict[str, Any]:
    """The server's response to one modern request, over the ``memory`` transport unless
    said."""
    reply = await server.handle(request(method, params), **options)
    assert reply.response is not None
    return reply.response


async def call(server: Server, name: str, **arguments: Any) -> dict[str, Any]:
    return await ask(server, "tools/call", {"name": name, "arguments": arguments})


class LegacyPeer:
    """A legacy client's session with the server, answered through the kernel."""

    def __init__(self, server: Server, principal: str | None = None) -> None:
        self.kernel = LegacyKernel(server)
        self.session = LegacySession(LegacyLimits(), principal=principal)
        self.principal = principal
        self.notes: list[dict[str, Any]] = []
        self.session.notify = self.notes.append
        self.next = 0

    async def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next, "method": method}
        if params is not None:
            message["params"] = params
        reply = await self.kernel.handle(
            self.session,
            message,
            principal=self.principal,
            transport="http",
            emit=self.notes.append,
        )
        assert reply.response is not None
        return reply.response

    async def initialize(self) -> None:
        response = await self.ask(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "legacy-test", "version": "1"},
            },
        )
        assert "result" in response, response

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        return await self.ask("tools/call", {"name": name, "arguments": arguments})
