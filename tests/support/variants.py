"""What the tool-result-variant tests share: a server's answer as its literal wire text
under a revision (every answer checked against it), a legacy session's answers, and the
``requestedOutputs`` of a call."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.server import Server
from snodo.server.legacy_limits import LegacyLimits

DRAFT, MODERN, LEGACY = "2026-12-01", "2026-07-28", "2025-11-25"


def message(id: int, method: str, params: dict[str, Any], version: str) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}}


def wire(server: Server, method: str, params: dict[str, Any], version: str = DRAFT) -> str:
    """The answer's JSON text; the server's answer checks found nothing invalid."""
    reply = asyncio.run(server.handle(message(1, method, params, version)))
    assert reply.response is not None
    assert server.answer_checks is not None and server.answer_checks.invalid == []
    return json.dumps(reply.response, separators=(",", ":"))


def legacy_answers(server: Server, asked: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Each answer's JSON text in one 2025-11-25 session, after its handshake."""

    async def run() -> list[str]:
        kernel, session = LegacyKernel(server), LegacySession(LegacyLimits())
        initialize = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"},
        }
        opening = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize}
        await kernel.handle(session, opening, emit=lambda note: None)
        answers = []
        for method, params in asked:
            request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
            reply = await kernel.handle(session, request, emit=lambda note: None)
            answers.append(json.dumps(reply.response, separators=(",", ":")))
        return answers

    return asyncio.run(run())


def asked(*selectors: tuple[str, str]) -> list[dict[str, str]]:
    """``requestedOutputs``: an ``(audience, format)`` pair each."""
    return [{"audience": audience, "format": format_} for audience, format_ in selectors]
