"""The era of a stdio process: the first request decides it (basic/versioning.mdx).

``initialize`` first makes the process a legacy session for its whole life (unless the
server is modern-only, when the core refuses it naming its versions); anything else
first makes it modern, and a later ``initialize`` gets that same refusal. In a legacy
process the client's responses complete the session's requests right away, and
requests go to the legacy kernel instead of the core.
"""

from __future__ import annotations

from typing import Any

from snodo.core.context import Emit
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.legacy.wire import is_initialize
from snodo.server import Reply, Server

__all__ = ["StdioEra"]


class StdioEra:
    def __init__(self, server: Server, write: Emit) -> None:
        self.server = server
        self.write = write
        self.decided = False
        self.session: LegacySession | None = None
        self.kernel: LegacyKernel | None = None

    def take(self, message: Any) -> bool:
        """Decide the era on the first request; True when ``message`` needs nothing more."""
        if not isinstance(message, dict):
            return False
        if not self.decided and isinstance(message.get("method"), str) and "id" in message:
            self.decided = True
            if is_initialize(message) and self.server.legacy is not None:
                self.session = LegacySession(self.server.legacy)
                self.session.notify = self.write
                self.kernel = LegacyKernel(self.server)
        if self.session is not None and "method" not in message and "id" in message:
            self.session.resolve(message["id"], message.get("result"), message.get("error"))
            return True
        return False

    async def handle(self, message: Any, emit: Emit) -> Reply:
        if self.session is not None and self.kernel is not None:
            return await self.kernel.handle(self.session, message, transport="stdio", emit=emit)
        return await self.server.handle(message, transport="stdio", emit=emit)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
