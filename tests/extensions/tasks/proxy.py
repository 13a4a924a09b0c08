"""A load balancer that sends each request to the next backend in turn, for the
task scale-out tests: ``python -m tests.extensions.tasks.proxy PORT BACKEND_URL [BACKEND_URL ...]``.

Round robin per request (not per connection), so consecutive requests of one task
(create, get, update, get, cancel) land on different worker processes. Responses
are streamed through, SSE included. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx
import uvicorn

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length", b"host"}


def app(backends: list[str]) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    turn = itertools.cycle(enumerate(backends))
    client = httpx.AsyncClient(timeout=httpx.Timeout(60.0))

    async def proxy(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        index, backend = next(turn)
        target = backend + scope["path"]
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        request = client.build_request(scope["method"], target, headers=headers, content=body)
        response = await client.send(request, stream=True)
        try:
            kept = [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP]
            kept.append((b"x-backend", str(index).encode()))  # which worker answered
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": kept}
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()

    return proxy


if __name__ == "__main__":
    uvicorn.run(app(sys.argv[2:]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
