"""``HttpApp`` driven in process by scripted ASGI messages.

uvicorn hands a small body over in one message; these drive the app with the other
shapes an ASGI server may use (a body in several messages, a disconnect instead of a
body, a body over the limit without a Content-Length) and check what is answered, and
what happens when a client stops taking the answer and leaves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

from snodo.server import Server
from snodo.transports.http import HttpApp
from snodo.transports.late_requests import WATCH_AFTER
from tests.support.wire import VERSION, request

LIMIT = 1024


def _app() -> HttpApp:
    server = Server("body-test", "1.0.0")

    @server.tool
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    return HttpApp(server, path="/mcp", max_body_bytes=LIMIT)


def _scope() -> dict[str, Any]:
    headers = {
        b"host": b"127.0.0.1:8000",
        b"content-type": b"application/json",
        b"accept": b"application/json, text/event-stream",
        b"mcp-protocol-version": VERSION.encode(),
        b"mcp-method": b"tools/call",
        b"mcp-name": b"echo",
    }
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": list(headers.items()),
    }


def _body(text: str) -> bytes:
    message = request("tools/call", {"name": "echo", "arguments": {"text": text}}, id=7)
    return json.dumps(message).encode()


def _serve(messages: list[dict[str, Any]]) -> tuple[int, bytes]:
    """Status and body the app answers when ``messages`` are what it receives."""
    sent: list[MutableMapping[str, Any]] = []
    pending = list(messages)

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop(0)
        await asyncio.sleep(3600)  # nothing more comes: the app must not wait for it
        raise AssertionError("unreachable")

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await asyncio.wait_for(_app()(_scope(), receive, send), timeout=10)

    asyncio.run(run())
    start, *bodies = sent
    assert start["type"] == "http.response.start"
    return start["status"], b"".join(part.get("body", b"") for part in bodies)


def _chunks(body: bytes, size: int) -> list[dict[str, Any]]:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return [
        {"type": "http.request", "body": part, "more_body": i < len(parts) - 1}
        for i, part in enumerate(parts)
    ]


def test_a_body_in_one_message_is_answered() -> None:
    status, answer = _serve([{"type": "http.request", "body": _body("whole")}])
    assert status == 200
    assert json.loads(answer)["result"]["content"] == [{"type": "text", "text": "whole"}]


def test_a_body_in_many_messages_is_joined_in_order() -> None:
    body = _body("pieces in order")
    messages = _chunks(body, 7)
    assert len(messages) > 3
    status, answer = _serve(messages)
    assert status == 200
    assert json.loads(answer)["result"]["content"][0]["text"] == "pieces in order"


def test_an_empty_first_message_then_the_body_is_read() -> None:
    body = _body("late")
    messages = [{"type": "http.request", "body": b"", "more_body": True}, *_chunks(body, 50)]
    status, answer = _serve(messages)
    assert status == 200
    assert json.loads(answer)["id"] == 7


def test_a_first_message_without_a_body_then_the_body_is_read() -> None:
    body = _body("no body key")
    status, answer = _serve([{"type": "http.request", "more_body": True}, *_chunks(body, 64)])
    assert status == 200
    assert json.loads(answer)["result"]["content"][0]["text"] == "no body key"


def test_a_request_with_no_body_at_all_is_a_parse_error() -> None:
    status, answer = _serve([{"type": "http.request"}])
    assert status == 400
    assert json.loads(answer)["error"]["code"] == -32700


def test_a_body_handed_over_as_a_bytearray_is_read_as_bytes() -> None:
    status, answer = _serve([{"type": "http.request", "body": bytearray(_body("mutable"))}])
    assert status == 200
    assert json.loads(answer)["result"]["content"][0]["text"] == "mutable"


def test_a_disconnect_before_the_body_is_answered_400() -> None:
    assert _serve([{"type": "http.disconnect"}]) == (400, b"client went away")


def test_a_disconnect_in_the_middle_of_the_body_is_answered_400() -> None:
    first = _chunks(_body("cut"), 20)[0]
    assert _serve([first, {"type": "http.disconnect"}]) == (400, b"client went away")


def test_one_message_over_the_limit_is_refused_413() -> None:
    body = _body("x" * LIMIT)
    assert len(body) > LIMIT
    status, answer = _serve([{"type": "http.request", "body": body}])
    assert (status, answer) == (413, b"request body too large")


def test_messages_that_together_pass_the_limit_are_refused_413() -> None:
    body = _body("y" * LIMIT)
    messages = _chunks(body, 100)
    assert all(len(m["body"]) <= LIMIT for m in messages)
    status, answer = _serve(messages)
    assert (status, answer) == (413, b"request body too large")


def test_a_body_of_exactly_the_limit_is_read() -> None:
    body = _body("")
    padded = body + b" " * (LIMIT - len(body))
    assert len(padded) == LIMIT
    status, answer = _serve([{"type": "http.request", "body": padded}])
    assert status == 200
    assert json.loads(answer)["result"]["content"] == [{"type": "text", "text": ""}]


def test_a_client_that_stalls_the_answer_and_leaves_is_let_go() -> None:
    """The answer's send never completes; the client's disconnect ends the request."""
    messages: list[dict[str, Any]] = [{"type": "http.request", "body": _body("stalled")}]
    started = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        # Only a watcher asks for more: it hears the client leave once the answer stalled.
        await started.wait()
        await asyncio.sleep(3 * WATCH_AFTER)
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        started.set()
        await asyncio.Event().wait()  # a client that no longer reads

    async def run() -> None:
        await asyncio.wait_for(_app()(_scope(), receive, send), timeout=5)

    asyncio.run(run())  # returns: neither hung on the send nor raised
    assert started.is_set()
