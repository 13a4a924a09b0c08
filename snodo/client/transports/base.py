"""What the client's transports share: the interfaces a Client talks to, and their errors.

``ClientTransport`` is one request at a time (and the listen stream); a
``SessionTransport`` can also hold a legacy (initialize-based) session.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from snodo import jsonrpc
from snodo.client.errors import HttpRefused, TransportError
from snodo.errors import ParseError
from snodo_wire.protocol import META_SUBSCRIPTION_ID as SUBSCRIPTION_ID

__all__ = [
    "SUBSCRIPTION_ID",
    "ClientTransport",
    "HttpRefused",
    "OnNotification",
    "OnRequest",
    "SessionTransport",
    "TransportError",
]

OnNotification = Callable[[dict[str, Any]], None]
OnRequest = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers a server-to-client request with the whole JSON-RPC response message."""


class ClientTransport(Protocol):
    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]: ...

    def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]: ...

    async def close(self) -> None: ...


@runtime_checkable
class SessionTransport(ClientTransport, Protocol):
    """What a legacy (initialize-based) session needs beyond one request at a time.

    ``probe_with_discover``: the era is probed with ``server/discover`` before anything
    else (stdio), rather than read off the first request's answer (HTTP). ``origin``
    keys the cached era verdict (None: the verdict lives with this transport's process).
    """

    probe_with_discover: bool
    origin: str | None

    def serve(self, on_request: OnRequest, on_notification: OnNotification) -> None: ...

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None: ...

    async def begin_session(self, headers: Mapping[str, str]) -> None: ...

    async def end_session(self, headers: Mapping[str, str]) -> None: ...

    async def restart(self) -> None: ...


def ignore(_note: dict[str, Any]) -> None:
    return None


def unanswerable(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to a server-to-client request when nothing is installed to answer."""
    return {
        "jsonrpc": "2.0",
        "id": request.get("id"),
        "error": {"code": -32601, "message": f"Method not found: {request.get('method')}"},
    }


def parsed_body(raw: bytes) -> Any:
    """A refusal's body: its JSON, else its text (None when empty)."""
    try:
        return jsonrpc.decode(raw) if raw else None
    except ParseError:
        return raw.decode("utf-8", "replace")
