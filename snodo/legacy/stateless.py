"""Legacy HTTP without sessions (``LegacyLimits(stateless=True)``, ``legacy="stateless"``).

For a server that wants no store at all and runs on anything: ``initialize`` is
answered with no ``Mcp-Session-Id`` (and with no list-changed or subscribe capability,
which nothing could deliver), and every later POST stands alone, its version read from
``MCP-Protocol-Version`` (the revision's assumption when absent; one the server does
not offer is 400, as on a session). There is no GET
stream and no DELETE (405), no subscription, and no question the server could send the
client mid-call: a handler that asks for input gets an error that names this mode (a
tool error for a tool, -32021 for a resource or a prompt). Progress and log messages of
a request still go out on its own SSE response.

What it costs, beside the full mode: bridged elicitation, sampling and roots, the GET
stream and resource subscriptions. A modern client of the same server loses nothing:
MRTR needs no session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snodo.core import jsonrpc
from snodo.core.errors import InvalidRequest
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.post import Post
from snodo.legacy.replies import Send, empty, json_reply, plain
from snodo.legacy.session import LegacySession
from snodo.legacy.shared import Entry
from snodo.legacy.wire import ASSUMED_VERSION, is_initialize
from snodo.server.legacy_limits import LegacyLimits

__all__ = ["Stateless"]


UNDELIVERABLE = ("listChanged", "subscribe")
"""Capabilities a stateless server cannot honour: there is no stream to notify on."""


class Stateless:
    """Each legacy POST on its own, with a session made for it and dropped after."""

    def __init__(self, kernel: LegacyKernel, limits: LegacyLimits) -> None:
        self.kernel = kernel
        self.limits = limits

    async def post(
        self,
        message: Any,
        headers: Mapping[str, str],
        principal: str | None,
        send: Send,
        scopes: frozenset[str] | None,
    ) -> None:
        if isinstance(message, list):
            refused = InvalidRequest("Invalid Request: no batches without a session")
            await json_reply(send, 400, jsonrpc.error_response(None, refused))
            return
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            await empty(send, 202)  # notifications, and answers nobody asked for
            return
        if message["method"] in ("resources/subscribe", "resources/unsubscribe"):
            refused = InvalidRequest("Invalid Request: no subscriptions without a session")
            await json_reply(send, 200, jsonrpc.error_response(message["id"], refused))
            return
        version = headers.get("mcp-protocol-version")
        if not is_initialize(message) and (
            version is not None and version.strip() not in self.kernel.server.legacy_versions
        ):
            # Legacy basic/transports.mdx: a version this server does not offer is 400,
            # as on a session.
            error = InvalidRequest(f"Bad Request: unsupported MCP-Protocol-Version {version!r}")
            await json_reply(send, 400, jsonrpc.error_response(None, error))
            return
        session = LegacySession(self.limits, principal=principal)
        session.stateless = True
        if is_initialize(message):
            await self._initialize(session, message, send)
            return
        session.version = ASSUMED_VERSION if version is None else version.strip()
        if "text/event-stream" not in headers.get("accept", ""):
            await plain(send, 406, b"accept both application/json and text/event-stream")
            return
        try:
            await Post(self.kernel, Entry(session, 0.0), message, principal, send, scopes).run()
        finally:
            session.close()

    async def _initialize(self, session: LegacySession, message: Any, send: Send) -> None:
        reply = await self.kernel.handle(session, message, transport="http", emit=session.notify)
        session.close()
        response = reply.response or {}
        result = response.get("result")
        if not isinstance(result, dict):
            await json_reply(send, 400, response)
            return
        capabilities = {
            name: {k: v for k, v in value.items() if k not in UNDELIVERABLE}
            if isinstance(value, dict)
            else value
            for name, value in result["capabilities"].items()
        }
        result = {**result, "capabilities": capabilities}
        await json_reply(send, 200, {**response, "result": result})
