"""What legacy HTTP sends back: JSON bodies, SSE streams and their events, plain
refusals; shared by the session table and the stateless mode."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from snodo.core import jsonrpc
from snodo.core.errors import InvalidRequest, McpError

__all__ = [
    "END",
    "SessionNotFound",
    "empty",
    "json_body",
    "json_reply",
    "no_session_error",
    "not_found",
    "plain",
    "sse_event",
    "sse_prime",
    "sse_retry",
    "sse_start",
    "unavailable",
    "wait_disconnect",
]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class SessionNotFound(McpError):
    """The body of a 404 for a session this process does not know."""

    code = -32001  # what the official SDKs send there
    default_message = "Session not found: send initialize to start a new session"


END: dict[str, Any] = {}
"""Put on a GET stream's queue to end it."""


async def wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def sse_start(send: Send) -> None:
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"", "more_body": True})


async def sse_event(send: Send, message: dict[str, Any], event_id: str | None = None) -> None:
    body = b"event: message\ndata: " + jsonrpc.encode(message) + b"\n\n"
    if event_id is not None:
        body = b"id: " + event_id.encode() + b"\n" + body
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def sse_prime(send: Send, event_id: str) -> None:
    """The priming event (an id, empty data): the client can resume from here on."""
    body = b"id: " + event_id.encode() + b"\ndata:\n\n"
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def sse_retry(send: Send, milliseconds: int) -> None:
    """Tell the client how long to wait before it reconnects (the stream ends next)."""
    body = b"retry: " + str(milliseconds).encode() + b"\n\n"
    await send({"type": "http.response.body", "body": body, "more_body": True})


async def json_reply(
    send: Send,
    status: int,
    message: dict[str, Any],
    extra: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    await json_body(send, status, jsonrpc.encode(message), extra)


async def json_body(
    send: Send, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + list(extra)})
    await send({"type": "http.response.body", "body": body})


async def plain(
    send: Send, status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def empty(send: Send, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def not_found(send: Send) -> None:
    await json_reply(send, 404, jsonrpc.error_response(None, SessionNotFound()))


def no_session_error() -> dict[str, Any]:
    """The 400 body for a sessionless legacy request."""
    error = InvalidRequest("Bad Request: no Mcp-Session-Id; send initialize to start a session")
    return jsonrpc.error_response(None, error)


async def unavailable(send: Send, detail: str) -> None:
    """503 with a JSON-RPC error: the shared session store did not answer."""
    error = McpError(f"Service unavailable: {detail}")
    await json_reply(send, 503, jsonrpc.error_response(None, error), ((b"retry-after", b"1"),))
