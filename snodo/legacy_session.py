"""The session a Client holds with a legacy (initialize-based) server.

Theory of operation (the legacy spec's basic/lifecycle.mdx and basic/transports.mdx). The
session opens with ``initialize``, offering the newest legacy revision and the
client's capabilities (the same object, built from the same installed handlers, that a
modern request carries in ``_meta``); it accepts any revision in
``LEGACY_PROTOCOL_VERSIONS`` that the server answers with and refuses the rest with
``UnsupportedServer``. Then ``notifications/initialized``, and over HTTP the
``Mcp-Session-Id`` and ``MCP-Protocol-Version`` headers on every message after, and
the standalone GET stream where the server offers one.

Requests carry plain params (no modern ``_meta`` keys). Requests from the server
(``elicitation/create``, ``sampling/createMessage``, ``roots/list``) go to the
client's ``InputHandlers``, the very object that answers MRTR input requests, so the
same handlers and the same validation apply (an undeclared method is -32601);
``ping`` is answered here. A handler that
fails becomes a JSON-RPC error to the server, never an exception in the client. A
request given up (cancelled, or past its deadline) is followed by
``notifications/cancelled``. Closing ends the session (DELETE over HTTP).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from snodo.client_handlers import InputHandlers
from snodo.client_results import ProtocolViolation, TooManyRounds, result_of
from snodo.era import (
    LEGACY_PROTOCOL_VERSIONS,
    ModernOnly,
    UnsupportedServer,
    error_message,
    named_versions,
)
from snodo.errors import ErrorCode
from snodo.transports.client_types import (
    HttpRefused,
    OnNotification,
    SessionTransport,
    TransportError,
)
from snodo_wire.protocol import META_SERVER_INFO
from snodo_wire_2025_11_25 import InitializeResult
from snodo_wire_2025_11_25.tables import SERVER_REQUESTS

__all__ = ["LegacySession"]


class LegacySession:
    def __init__(
        self,
        transport: SessionTransport,
        *,
        info: Mapping[str, str],
        inputs: InputHandlers,
        on_notification: OnNotification,
        ids: Iterator[int],
    ) -> None:
        self.transport = transport
        self.info = dict(info)
        self.inputs = inputs
        self.on_notification = on_notification
        self.ids = ids
        self.version = LEGACY_PROTOCOL_VERSIONS[0]
        self.server: dict[str, Any] = {}
        """The server's InitializeResult."""

    def headers(self) -> dict[str, str]:
        """Sent with every message after initialize (ignored by stdio)."""
        return {"MCP-Protocol-Version": self.version}

    async def open(self) -> None:
        """initialize, check the revision, initialized, and the GET stream."""
        try:
            await self._open()
        except HttpRefused as refused:
            raise UnsupportedServer(
                f"the server refused initialize (HTTP {refused.status}: "
                f"{error_message(refused.body)})",
                named_versions(refused.body),
            ) from None

    async def _open(self) -> None:
        self.transport.serve(self._serve, self.on_notification)
        response = await self.transport.request(
            self._request(
                "initialize",
                {
                    "protocolVersion": self.version,
                    "capabilities": self.inputs.capabilities(),
                    "clientInfo": self.info,
                },
            ),
            {},
            self.on_notification,
        )
        result = response.get("result")
        if not isinstance(result, dict):
            raise UnsupportedServer(
                f"the server refused initialize: {error_message(response)}",
                named_versions(response),
            )
        version = result.get("protocolVersion")
        if version not in LEGACY_PROTOCOL_VERSIONS:
            raise UnsupportedServer(
                f"the server answered initialize with protocol version {version!r}",
                [str(version)],
            )
        try:
            InitializeResult.model_validate(result)
        except ValidationError as exc:
            raise ProtocolViolation(f"the server's InitializeResult is not valid: {exc}") from exc
        self.version = str(version)
        self.server = result
        await self.transport.notify(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers()
        )
        await self.transport.begin_session(self.headers())

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": dict(params)}

    async def request(
        self, method: str, params: Mapping[str, Any], on_notification: OnNotification
    ) -> dict[str, Any]:
        """Send one request; return its response message (result or error)."""
        message = self._request(method, params)
        try:
            return await self.transport.request(message, self.headers(), on_notification)
        except asyncio.CancelledError:
            # The legacy basic/utilities/cancellation.mdx; stdio already said so itself.
            if not self.transport.probe_with_discover:
                with contextlib.suppress(Exception):
                    await self.transport.notify(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": message["id"], "reason": "cancelled"},
                        },
                        self.headers(),
                    )
            raise

    async def _serve(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one server-to-client request with a whole response message."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
        if request.get("method") == "ping":
            return {**reply, "result": {}}
        method = str(request.get("method"))
        if method not in SERVER_REQUESTS or not self.inputs.declares(method):
            error = {
                "code": int(ErrorCode.METHOD_NOT_FOUND),
                "message": f"Method not found: {method}",
            }
            return {**reply, "error": error}
        try:
            answer = await self.inputs.answer(request)
            # The same checks as an MRTR answer, then the legacy schema's own.
            SERVER_REQUESTS[method].result.model_validate(answer)
            reply["result"] = answer
        except Exception as exc:
            reply["error"] = {"code": int(ErrorCode.INTERNAL_ERROR), "message": str(exc)}
        return reply

    async def call(
        self,
        method: str,
        params: Mapping[str, Any],
        on_notification: OnNotification,
        deadline: float | None = None,
    ) -> dict[str, Any]:
        """The result of one request (RequestError for an error); ``deadline`` bounds
        it as it bounds a modern flow (TooManyRounds past it)."""
        if method == "server/discover":
            return self.discovered()
        if method == "subscriptions/listen":
            raise ModernOnly("subscriptions/listen needs a modern server")
        call = self.request(method, params, on_notification)
        try:
            response = await (call if deadline is None else asyncio.wait_for(call, deadline))
        except TimeoutError:
            raise TooManyRounds(f"{method} did not complete within {deadline} s") from None
        return result_of(response)

    def discovered(self) -> dict[str, Any]:
        """What ``server/discover`` would have said, from the InitializeResult."""
        found: dict[str, Any] = {
            "supportedVersions": [self.version],
            "capabilities": self.server.get("capabilities") or {},
        }
        if isinstance(self.server.get("serverInfo"), dict):
            found["_meta"] = {META_SERVER_INFO: self.server["serverInfo"]}
        if "instructions" in self.server:
            found["instructions"] = self.server["instructions"]
        return found

    async def close(self) -> None:
        with contextlib.suppress(TransportError, ConnectionError):
            await self.transport.end_session(self.headers())
