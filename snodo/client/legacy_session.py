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
same handlers and the same checks apply before any handler runs (an undeclared
method is -32601, an undeclared sub-capability or unsafe URL -32602); ``ping`` is
answered here. A session answers at most ``limits.max_server_requests`` requests, and
at most ``limits.max_pending_server_requests`` at once; beyond, the server gets an
error and no handler runs. A handler that fails becomes a JSON-RPC error to the
server, never an exception in the client. A request given up (cancelled, or past its
deadline: the Client bounds each call) is followed by ``notifications/cancelled``.
Closing ends the session (DELETE over HTTP). A request answered 404 (the server has
forgotten the session: a restart, or its idle expiry) starts a new session with
``initialize`` and is sent again, once: the server did not process it.

``listen`` maps the modern ``subscriptions/listen`` onto the session:
``resources/subscribe`` for each URI, then the list-changed and resource-updated
notifications the session hears (on its GET stream or any response stream), in the
shape a modern listen stream has, acknowledgement first; closing the iterator
unsubscribes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from snodo.client.checks import safe_icons
from snodo.client.era import (
    LEGACY_PROTOCOL_VERSIONS,
    UnsupportedServer,
    error_message,
    named_versions,
)
from snodo.client.errors import ClientError, NotAuthorized, ProtocolViolation, RequestError
from snodo.client.handlers import InputHandlers
from snodo.client.limits import ClientLimits
from snodo.client.results import result_of
from snodo.client.transports.base import (
    HttpRefused,
    OnNotification,
    SessionTransport,
    TransportError,
)
from snodo.core.errors import ErrorCode
from snodo.revisions import REVISIONS
from snodo.revisions.authoring.protocol import META_SERVER_INFO, META_SUBSCRIPTION_ID

__all__ = ["LegacySession"]


def _key(request_id: object) -> str | int | None:
    """A request id usable as a key: a string or an integer, never a bool."""
    if isinstance(request_id, str | int) and not isinstance(request_id, bool):
        return request_id
    return None


LIST_CHANGED = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
"""A listen stream's notification types, by the method that carries each."""
RESOURCE_UPDATED = "notifications/resources/updated"


class LegacySession:
    def __init__(
        self,
        transport: SessionTransport,
        *,
        info: Mapping[str, str],
        inputs: InputHandlers,
        on_notification: OnNotification,
        ids: Iterator[int],
        limits: ClientLimits | None = None,
    ) -> None:
        self.limits = limits or ClientLimits()
        self.served = 0
        self.answering = 0
        self.renewals = 0
        """Sessions started afresh after the server forgot one (HTTP 404)."""
        self.in_flight: dict[str | int, asyncio.Future[dict[str, Any]]] = {}
        """The handlers answering server-to-client requests now, by request id."""
        self.listening: list[asyncio.Queue[dict[str, Any]]] = []
        self.transport = transport
        self.info = dict(info)
        self.inputs = inputs
        self.on_notification = on_notification
        self.ids = ids
        self.version = LEGACY_PROTOCOL_VERSIONS[0]
        self.revision = REVISIONS.of(self.version)
        """The negotiated version's revision: what the server's messages are checked with."""
        self.server: dict[str, Any] = {}
        """The server's InitializeResult."""

    def headers(self) -> dict[str, str]:
        """Sent with every message after initialize (ignored by stdio)."""
        return {"MCP-Protocol-Version": self.version}

    async def open(self) -> None:
        """initialize, check the revision, initialized, and the GET stream."""
        try:
            await self._open()
        except NotAuthorized:
            raise  # credentials, not the era
        except HttpRefused as refused:
            raise UnsupportedServer(
                f"the server refused initialize (HTTP {refused.status}: "
                f"{error_message(refused.body)})",
                named_versions(refused.body),
                status=refused.status,
                location=refused.location,
            ) from None

    async def _open(self) -> None:
        self.transport.serve(self._serve, self._notified)
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
        revision = REVISIONS.of(version)
        try:
            revision.models.InitializeResult.model_validate(result)
        except ValidationError as exc:
            raise ProtocolViolation(f"the server's InitializeResult is not valid: {exc}") from exc
        self.version = str(version)
        self.revision = revision
        info = result.get("serverInfo")
        if isinstance(info, dict):  # its icons as any other: unsafe schemes dropped
            result = {**result, "serverInfo": safe_icons(info)}
        self.server = result
        await self.transport.notify(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers()
        )
        await self.transport.begin_session(self.headers())

    async def renew(self) -> None:
        """A new session in place of one the server has forgotten: what the old one
        opened is closed, then ``initialize`` again, with the same capabilities."""
        self.renewals += 1
        with contextlib.suppress(Exception):
            await self.transport.end_session(self.headers())
        await self.open()

    def _request(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": dict(params)}

    async def request(
        self, method: str, params: Mapping[str, Any], on_notification: OnNotification
    ) -> dict[str, Any]:
        """Send one request; return its response message (result or error)."""
        message = self._request(method, params)

        def heard(note: dict[str, Any]) -> None:
            self._fan_out(note)
            on_notification(note)

        try:
            try:
                return await self.transport.request(message, self.headers(), heard)
            except HttpRefused as refused:
                if refused.status != 404 or method == "initialize":
                    raise
            # The session is gone (a restart, or the server's idle expiry): the legacy
            # basic/transports.mdx has the client start a new one. A request the server
            # refused for its session was never processed, so it is sent again, once.
            await self.renew()
            message = self._request(method, params)
            return await self.transport.request(message, self.headers(), heard)
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

    def _notified(self, note: dict[str, Any]) -> None:
        """A notification outside any request (the GET stream, or stdio between calls)."""
        self._fan_out(note)
        self.on_notification(note)

    def _fan_out(self, note: dict[str, Any]) -> None:
        method = note.get("method")
        if method == "notifications/cancelled":
            self._cancelled(note)
        if method in LIST_CHANGED or method == RESOURCE_UPDATED:
            for queue in self.listening:
                if queue.qsize() < self.limits.max_notifications:
                    queue.put_nowait(note)

    async def _serve(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Answer one server-to-client request with a whole response message; None when
        the server cancelled it meanwhile (its handler is cancelled, and no answer goes:
        the legacy basic/utilities/cancellation.mdx)."""
        self.served += 1
        self.answering += 1
        key = _key(request.get("id"))
        handler: asyncio.Future[dict[str, Any]] | None = None
        try:
            refused = self._over_limits(request)
            if refused is not None:
                return refused
            handler = asyncio.ensure_future(self._reply(request))
            if key is not None:
                self.in_flight[key] = handler
            return await asyncio.shield(handler)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            assert handler is not None
            if handler.cancelled() and not (current is not None and current.cancelling()):
                return None  # the server's cancellation, not ours
            handler.cancel()
            raise
        finally:
            self.answering -= 1
            if key is not None and handler is not None and self.in_flight.get(key) is handler:
                del self.in_flight[key]

    def _over_limits(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The refusal of a request beyond the session's caps, None within them."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
        if self.served > self.limits.max_server_requests:
            return _refusal(reply, ErrorCode.INTERNAL_ERROR, "too many requests this session")
        if self.answering > self.limits.max_pending_server_requests:
            return _refusal(reply, ErrorCode.INTERNAL_ERROR, "too many requests at once")
        return None

    def _cancelled(self, note: dict[str, Any]) -> None:
        """The server gave up a request it sent: stop the handler answering it."""
        params = note.get("params")
        key = _key(params.get("requestId")) if isinstance(params, dict) else None
        handler = self.in_flight.get(key) if key is not None else None
        if handler is not None:
            handler.cancel()

    async def _reply(self, request: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
        if request.get("method") == "ping":
            return {**reply, "result": {}}
        method = str(request.get("method"))
        if method not in self.revision.server_requests or not self.inputs.declares(method):
            return _refusal(reply, ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        try:
            self.inputs.check(request)
        except ProtocolViolation as refused:
            return _refusal(reply, ErrorCode.INVALID_PARAMS, f"Invalid params: {refused}")
        try:
            answer = await self.inputs.answer(request)
            # The same checks as an MRTR answer, then the legacy schema's own.
            self.revision.server_requests[method].result.model_validate(answer)
            reply["result"] = answer
        except Exception as exc:
            reply["error"] = {"code": int(ErrorCode.INTERNAL_ERROR), "message": str(exc)}
        return reply

    async def call(
        self,
        method: str,
        params: Mapping[str, Any],
        on_notification: OnNotification,
    ) -> dict[str, Any]:
        """The result of one request (RequestError for an error)."""
        if method == "server/discover":
            return self.discovered()
        return result_of(await self.request(method, params, on_notification))

    async def listen(
        self, notifications: Mapping[str, Any], listen_id: int
    ) -> AsyncGenerator[dict[str, Any], None]:
        """The modern listen stream's messages, from this session: subscribe to the
        URIs the server lets us, acknowledge what will be delivered, then yield each
        matching notification tagged with ``listen_id``."""
        capabilities = self.server.get("capabilities") or {}
        # A list-changed type is honoured where the server has that feature at all: many
        # legacy servers send the notifications without declaring ``listChanged``.
        honoured: dict[str, Any] = {
            key: True
            for key in LIST_CHANGED.values()
            if notifications.get(key) is True
            and isinstance(capabilities.get(key.removesuffix("ListChanged")), dict)
        }
        uris = notifications.get("resourceSubscriptions") or []
        watched = [uri for uri in dict.fromkeys(uris) if isinstance(uri, str)]
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.listening.append(queue)
        subscribed: list[str] = []
        try:
            for uri in watched:
                # Tried whatever ``resources.subscribe`` says (some servers serve it
                # undeclared); a refusal leaves the URI out of the acknowledgement.
                with contextlib.suppress(RequestError):
                    await self.call("resources/subscribe", {"uri": uri}, self.on_notification)
                    subscribed.append(uri)
            if subscribed:
                honoured["resourceSubscriptions"] = subscribed
            yield _tagged(
                {"method": "notifications/subscriptions/acknowledged"},
                listen_id,
                {"notifications": honoured},
            )
            while True:
                note = await queue.get()
                method = str(note.get("method"))
                raw = note.get("params")
                updated = raw.get("uri") if isinstance(raw, dict) else None
                if method in LIST_CHANGED and honoured.get(LIST_CHANGED[method]) is True:
                    yield _tagged(note, listen_id, {})
                elif method == RESOURCE_UPDATED and _watches(subscribed, updated):
                    yield _tagged(note, listen_id, {"uri": updated})
        finally:
            self.listening.remove(queue)
            for uri in subscribed:
                with contextlib.suppress(ClientError, ConnectionError):
                    await asyncio.wait_for(
                        self.call("resources/unsubscribe", {"uri": uri}, self.on_notification),
                        self.limits.close_grace,
                    )

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


def _refusal(reply: dict[str, Any], code: int, message: str) -> dict[str, Any]:
    return {**reply, "error": {"code": int(code), "message": message}}


def _watches(subscribed: list[str], uri: Any) -> bool:
    """The modern listen's rule: a watched URI covers itself and what lies under it."""
    return isinstance(uri, str) and any(
        uri == watched or uri.startswith(watched.rstrip("/") + "/") for watched in subscribed
    )


def _tagged(note: Mapping[str, Any], listen_id: int, params: dict[str, Any]) -> dict[str, Any]:
    """``note`` as a modern listen stream carries it: tagged with the listen's id."""
    return {
        "jsonrpc": "2.0",
        "method": note["method"],
        "params": {"_meta": {META_SUBSCRIPTION_ID: listen_id}, **params},
    }
