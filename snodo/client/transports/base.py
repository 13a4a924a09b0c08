"""What the client's transports share: the interfaces a Client talks to, and their errors.

``ClientTransport`` is one request at a time (and the listen stream); a
``SessionTransport`` can also hold a legacy (initialize-based) session.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from snodo.client.errors import HttpRefused, TransportError
from snodo.core import jsonrpc
from snodo.core.errors import ParseError
from snodo.revisions.authoring.protocol import META_SUBSCRIPTION_ID as SUBSCRIPTION_ID

__all__ = [
    "SUBSCRIPTION_ID",
    "ClientTransport",
    "HttpRefused",
    "OnNotification",
    "OnRequest",
    "PassingTransport",
    "SessionTransport",
    "TransportError",
]

OnNotification = Callable[[dict[str, Any]], None]
OnRequest = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Answers a server-to-client request with the whole JSON-RPC response message."""


class ClientTransport(Protocol):
    """How a ``Client`` reaches one server: one request at a time, and the listen stream."""

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """Send the request ``message`` (with ``headers`` where the wire has them) and
        return its response message, result or error, handing each notification that
        arrives for it to ``on_notification`` first. Raises ``TransportError`` (an
        ``HttpRefused`` for an HTTP status outside 2xx) when it cannot be delivered or
        answered."""
        ...

    def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Send the ``subscriptions/listen`` request ``message`` and yield each message
        of its stream; a response (an error, or the stream's end) comes last. Closing the
        generator ends the stream, and with it the subscription."""
        ...

    async def close(self) -> None:
        """Release what the transport holds: its connections or server process."""
        ...


@runtime_checkable
class SessionTransport(ClientTransport, Protocol):
    """What a legacy (initialize-based) session needs beyond one request at a time.

    ``probe_with_discover``: the era is probed with ``server/discover`` before anything
    else (stdio), rather than read off the first request's answer (HTTP). ``origin``
    keys the cached era verdict (None: the verdict lives with this transport's process).
    """

    probe_with_discover: bool
    origin: str | None

    def serve(self, on_request: OnRequest, on_notification: OnNotification) -> None:
        """Install the session's handlers: ``on_request`` answers server-to-client
        requests, ``on_notification`` takes notifications no request in flight claims."""
        ...

    async def notify(self, message: dict[str, Any], headers: Mapping[str, str]) -> None:
        """Send a notification, or a response to a server-to-client request; nothing
        comes back. ``TransportError`` when it cannot be delivered."""
        ...

    async def begin_session(self, headers: Mapping[str, str]) -> None:
        """Open what the session needs once initialized (HTTP: the standalone GET stream)."""
        ...

    async def end_session(self, headers: Mapping[str, str]) -> None:
        """Close what ``begin_session`` opened and end the session where the wire can
        (HTTP: DELETE)."""
        ...

    async def restart(self) -> None:
        """Start afresh after a failed era probe (stdio: a new server process); nothing
        where every request is its own exchange."""
        ...


@runtime_checkable
class PassingTransport(Protocol):
    """A transport that can leave a result's large members encoded, for a proxy to
    pass on as they came (``snodo.client.transports.passthrough``)."""

    async def request_passing(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        """``request``, a complete result's members over a few hundred bytes each kept
        as an ``orjson.Fragment`` of their bytes."""
        ...


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
