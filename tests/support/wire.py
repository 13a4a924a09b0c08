"""Helpers for literal wire tests against the in-process core."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from snodo.server import Reply, Server
from snodo_wire import (
    InputRequiredResult,
    JSONRPCErrorResponse,
    MissingRequiredClientCapabilityError,
    UnsupportedProtocolVersionError,
)
from snodo_wire.tables import METHODS, SERVER_NOTIFICATIONS

VERSION = "2026-07-28"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "1.0.0"}}


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        **extra,
    }


def request(
    method: str, params: dict[str, Any] | None = None, id: int | str = 1, **meta_kw: Any
) -> dict[str, Any]:
    capabilities = meta_kw.pop("capabilities", None)
    return {
        "jsonrpc": "2.0",
        "id": id,
        "method": method,
        "params": {"_meta": meta(capabilities, **meta_kw), **(params or {})},
    }


def validate_outgoing(message: dict[str, Any], method: str | None) -> None:
    """Every message the server sends must be valid under the pinned schema."""
    if "method" in message:
        SERVER_NOTIFICATIONS[message["method"]].notification.model_validate(message)
        return
    if "error" in message:
        code = message["error"]["code"]
        model = {
            -32021: MissingRequiredClientCapabilityError,
            -32022: UnsupportedProtocolVersionError,
        }.get(code, JSONRPCErrorResponse)
        model.model_validate(message)
        return
    result = message["result"]
    assert method is not None
    if result.get("resultType") == "input_required":
        InputRequiredResult.model_validate(result)
    else:
        assert result["resultType"] == "complete"
        METHODS[method].result.model_validate(result)


def call(server: Server, message: Any, **options: Any) -> Reply:
    reply = asyncio.run(server.handle(message, **options))
    method = message.get("method") if isinstance(message, dict) else None
    if reply.response is not None:
        json.dumps(reply.response, allow_nan=False)
        validate_outgoing(reply.response, method)
    for note in reply.notifications:
        validate_outgoing(note, None)
    return reply


def answer(server: Server, message: Any, **options: Any) -> dict[str, Any]:
    reply = call(server, message, **options)
    assert reply.response is not None
    return reply.response
