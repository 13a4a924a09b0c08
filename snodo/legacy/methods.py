"""The legacy kernel: the methods of an initialize-based session, over the modern core.

``LegacyKernel.handle`` takes one message of a legacy session and answers it like
``Server.handle`` does (a ``Reply``), so transports treat both alike:

- ``initialize`` negotiates the version (the client's when it is one of
  ``wire.VERSIONS``, else the latest) and records the client's capabilities and info;
  capabilities, instructions and server info come from the core's own
  ``server/discover`` answer, so both eras describe the server identically;
- ``ping``; ``logging/setLevel`` (the level then rides on every forwarded request, so
  the one log gate of ``Context.log`` applies); ``resources/subscribe`` and
  ``unsubscribe`` (the session's URIs on the server's one subscription bus);
- the methods the core already knows go through the bridge (``bridge.forward``);
- a response from the client completes the session's request it answers;
  ``notifications/initialized`` and other notifications need no answer (cancellation
  is the transport's: it owns the tasks).

Anything else, ``server/discover`` and ``subscriptions/listen`` included, is -32601:
those belong to the other era.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from snodo.core import jsonrpc
from snodo.core.context import Emit
from snodo.core.errors import InternalError, InvalidParams, InvalidRequest, McpError, MethodNotFound
from snodo.core.observe import QUIET
from snodo.legacy.bridge import forward
from snodo.legacy.session import LegacySession
from snodo.legacy.wire import FORWARDED, check_params, check_result, legacy_result, negotiate
from snodo.revisions import Revision
from snodo.revisions.authoring.protocol import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)
from snodo.server import Reply, Server

__all__ = ["OWN", "LegacyKernel"]

OWN = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
"""The legacy methods the kernel answers itself; the rest of its table is ``FORWARDED``."""

log = logging.getLogger("snodo.legacy")


class LegacyKernel:
    """Answers legacy messages for one server; the session is the caller's."""

    def __init__(self, server: Server) -> None:
        self.server = server

    async def handle(
        self,
        session: LegacySession,
        message: Any,
        *,
        principal: str | None = None,
        transport: str = "memory",
        emit: Emit,
        scopes: frozenset[str] | None = None,
    ) -> Reply:
        """Answer one message of ``session``. Never raises for anything the peer sent."""
        try:
            incoming = jsonrpc.parse(message)
        except McpError as exc:
            return Reply(jsonrpc.error_response(jsonrpc.error_id(exc), exc))
        if isinstance(incoming, jsonrpc.Response):
            session.resolve(incoming.id, incoming.result, incoming.error)
            return Reply(None)
        if isinstance(incoming, jsonrpc.Notification):
            return Reply(None)
        checks = self.server.answer_checks
        if checks is not None:
            emit = checks.watch(self._revision(session), emit)
        observer = self.server.observer
        if observer is QUIET:
            reply = await self._request(session, incoming, principal, transport, emit, scopes)
        else:
            # The legacy request is one span; each round the bridge sends through the
            # core runs inside it, so the rounds are its children.
            observation = observer.request(incoming, "legacy", transport, {})
            try:
                reply = await self._request(session, incoming, principal, transport, emit, scopes)
            except BaseException:
                observation.cancelled()
                raise
            observation.finish(reply.response)
        if checks is not None:  # initialize settles the revision its answer is of
            checks.reply(self._revision(session), incoming.method, reply.response)
        return reply

    def _revision(self, session: LegacySession) -> Revision:
        """The revision of the session's version; before ``initialize``, the newest
        legacy one."""
        revisions = self.server.revisions
        if session.version is not None:
            return revisions.of(session.version)
        return revisions.newest("legacy")

    async def _request(
        self,
        session: LegacySession,
        incoming: jsonrpc.Request,
        principal: str | None,
        transport: str,
        emit: Emit,
        scopes: frozenset[str] | None,
    ) -> Reply:
        try:
            registry = self.server.registry
            if incoming.method in FORWARDED or (
                incoming.method in registry.extension_methods
                and incoming.method not in registry.modern_methods
            ):
                return Reply(
                    await forward(
                        self.server,
                        session,
                        incoming,
                        principal=principal,
                        transport=transport,
                        emit=emit,
                        scopes=scopes,
                    )
                )
            result = await self._own(session, incoming)
        except McpError as exc:
            return Reply(jsonrpc.error_response(incoming.id, exc))
        except Exception:
            log.exception("unexpected failure answering legacy %s", incoming.method)
            return Reply(jsonrpc.error_response(incoming.id, InternalError()))
        return Reply(jsonrpc.result_response(incoming.id, result))

    async def _own(self, session: LegacySession, request: jsonrpc.Request) -> dict[str, Any]:
        method, params = request.method, request.params
        if method not in OWN:
            raise MethodNotFound(f"Method not found: {method}")
        if method != "initialize" and session.version is None:
            raise InvalidRequest("Invalid request: the session is not initialized")
        check_params(method, params)
        result: dict[str, Any] = {}
        if method == "initialize":
            result = await self._initialize(session, params)
        elif method == "logging/setLevel":
            session.log_level = params["level"]
        elif method == "resources/subscribe" and not session.subscribe(params["uri"]):
            raise InvalidParams("Invalid params: too many resource subscriptions")
        elif method == "resources/unsubscribe":
            session.unsubscribe(params["uri"])
        return check_result(method, result)

    async def _initialize(
        self, session: LegacySession, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        if session.version is not None:
            raise InvalidRequest("Invalid request: the session is already initialized")
        described = await self._describe()
        version = negotiate(params["protocolVersion"], self.server.legacy_versions)
        revision = self.server.revisions.of(version)  # what this session's answers may say
        bus = self.server.subscriptions
        session.start(
            version, params["capabilities"], params["clientInfo"], bus, self.server.observer
        )
        result: dict[str, Any] = {
            "protocolVersion": version,
            # Read before any revision's shaping: the legacy one's flags are its own.
            "capabilities": revision.capabilities(self.server.capabilities()),
            "serverInfo": revision.info(described["_meta"][META_SERVER_INFO]),
        }
        if "instructions" in described:
            result["instructions"] = described["instructions"]
        return result

    async def _describe(self) -> dict[str, Any]:
        """The core's server/discover result: capabilities, instructions, server info."""
        newest = self.server.supported_versions[0]  # the newest modern version served
        meta = {META_PROTOCOL_VERSION: newest, META_CLIENT_CAPABILITIES: {}}
        discover = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "server/discover",
            "params": {"_meta": meta},
        }
        reply = await self.server.handle(discover, transport="legacy")
        result = (reply.response or {}).get("result")
        if not isinstance(result, dict):
            log.error("server/discover failed while answering initialize: %s", reply.response)
            raise InternalError()
        described: dict[str, Any] = legacy_result(result)
        described["_meta"] = result["_meta"]
        return described
