"""How a Client reaches a server: in memory, over Streamable HTTP, or over stdio.

Each transport sends one JSON-RPC request and returns its response, handing every
notification that arrives for it (progress, log messages, listen-stream messages) to
``on_notification`` as it comes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, Protocol

from snodo import jsonrpc
from snodo.errors import ParseError
from snodo.server import Server
from snodo_wire.protocol import META_SUBSCRIPTION_ID

__all__ = ["ClientTransport", "HttpTransport", "MemoryTransport", "StdioTransport"]

OnNotification = Callable[[dict[str, Any]], None]


class TransportError(Exception):
    """The transport could not deliver a request or read its answer."""


class ClientTransport(Protocol):
    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]: ...

    def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]: ...

    async def close(self) -> None: ...


class MemoryTransport:
    """Straight into a Server's core, in this process: no sockets, no framing."""

    def __init__(self, server: Server, principal: str | None = None) -> None:
        self.server = server
        self.principal = principal

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        wire = json.loads(jsonrpc.encode(message))  # the same bytes a socket would carry
        reply = await self.server.handle(wire, principal=self.principal, emit=on_notification)
        if reply.response is None:
            raise TransportError("the server sent no response")
        return reply.response

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        reply = await self.server.handle(message, principal=self.principal, emit=queue.put_nowait)
        if reply.response is not None:
            yield reply.response
            return
        try:
            while True:
                yield await queue.get()
        finally:
            if reply.subscription is not None:
                self.server.close_subscription(reply.subscription)

    async def close(self) -> None:
        return None


def _sse_messages(lines: Sequence[str]) -> list[dict[str, Any]]:
    found = []
    for line in lines:
        text = line[5:].strip() if line.startswith("data:") else line.strip()
        if not text or text.startswith(":") or line.startswith(("event:", "id:", "retry:")):
            continue
        with contextlib.suppress(ParseError):
            value = jsonrpc.decode(text)
            if isinstance(value, dict):
                found.append(value)
    return found


class HttpTransport:
    """Streamable HTTP: one POST a request; JSON or SSE answers."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        client: Any = None,
    ) -> None:
        import httpx  # noqa: PLC0415 - optional dependency (snodo[http])

        self.url = url
        self.headers = dict(headers or {})
        self.client = client or httpx.AsyncClient(timeout=timeout)

    def _headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            **self.headers,
            **headers,
        }

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        async for item in self._post(message, headers):
            if "method" not in item and item.get("id") == message.get("id"):
                return item
            if "error" in item and item.get("id") is None:
                return item  # refused before its id could be read (a -32700, say)
            if "method" in item and "id" not in item:
                on_notification(item)
        raise TransportError("the response stream ended without an answer")

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        async for item in self._post(message, headers):
            yield item

    async def _post(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        body = jsonrpc.encode(message)
        async with self.client.stream(
            "POST", self.url, content=body, headers=self._headers(headers)
        ) as response:
            kind = response.headers.get("content-type", "")
            if "text/event-stream" in kind:
                async for line in response.aiter_lines():
                    for item in _sse_messages([line]):
                        yield item
                return
            raw = await response.aread()
            if not raw:
                if response.status_code >= 400:
                    raise TransportError(f"HTTP {response.status_code}")
                return
            try:
                value = jsonrpc.decode(raw)
            except ParseError as exc:
                raise TransportError(f"HTTP {response.status_code}: not JSON") from exc
            if not isinstance(value, dict):
                raise TransportError("the server answered with something other than an object")
            yield value

    async def close(self) -> None:
        await self.client.aclose()


class StdioTransport:
    """A server subprocess speaking newline-delimited JSON-RPC on its stdin/stdout."""

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None) -> None:
        self.command = list(command)
        self.env = {**os.environ, **(env or {})}
        self.process: asyncio.subprocess.Process | None = None
        self.pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self.listeners: list[tuple[OnNotification, Any]] = []
        """(callback, progress token) of each request in flight."""
        self.reader: asyncio.Task[None] | None = None
        self.lock = asyncio.Lock()

    async def _start(self) -> asyncio.subprocess.Process:
        if self.process is None:
            self.process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=self.env,
                limit=16 * 1024 * 1024,
            )
            self.reader = asyncio.ensure_future(self._read(self.process))
        return self.process

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while line := await process.stdout.readline():
            try:
                message = jsonrpc.decode(line)
            except ParseError:
                continue
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" not in message:
                self._route(message)
                continue
            future = self.pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(TransportError("the server process ended"))

    def _route(self, note: dict[str, Any]) -> None:
        """stdio shares one stream. A listen stream's messages go to that stream only,
        progress to the request holding its token, anything else once to each distinct
        callback, however many requests in flight share it."""
        raw = note.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        raw_meta = params.get("_meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        token: Any = None
        if META_SUBSCRIPTION_ID in meta:
            token = ("subscription", meta[META_SUBSCRIPTION_ID])
        elif note.get("method") == "notifications/progress":
            token = params.get("progressToken")
        told: list[OnNotification] = []
        for callback, own_token in list(self.listeners):
            if token is not None and own_token != token:
                continue
            if token is None and isinstance(own_token, tuple):
                continue
            if not any(callback is seen for seen in told):
                told.append(callback)
                callback(note)

    async def send(self, message: dict[str, Any]) -> None:
        process = await self._start()
        assert process.stdin is not None
        async with self.lock:
            process.stdin.write(jsonrpc.encode(message) + b"\n")
            await process.stdin.drain()

    async def request(
        self, message: dict[str, Any], headers: Mapping[str, str], on_notification: OnNotification
    ) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[message["id"]] = future
        meta = (message.get("params") or {}).get("_meta") or {}
        listener = (on_notification, meta.get("progressToken"))
        self.listeners.append(listener)
        try:
            await self.send(message)
            return await future
        except asyncio.CancelledError:
            await self.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": message["id"], "reason": "cancelled"},
                }
            )
            raise
        finally:
            self.listeners.remove(listener)
            self.pending.pop(message["id"], None)

    async def stream(
        self, message: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[message["id"]] = future
        mine = message["id"]

        def route(note: dict[str, Any]) -> None:
            meta = (note.get("params") or {}).get("_meta") or {}
            if meta.get(META_SUBSCRIPTION_ID) == mine:
                queue.put_nowait(note)

        self.listeners.append((route, ("subscription", mine)))
        try:
            await self.send(message)
            while True:
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, future}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                    continue
                getter.cancel()
                yield future.result()
                return
        finally:
            self.listeners.remove((route, ("subscription", mine)))
            self.pending.pop(mine, None)
            if not future.done():
                with contextlib.suppress(TransportError, ConnectionError):
                    await self.send(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": mine},
                        }
                    )

    async def close(self) -> None:
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), timeout=5)
        except TimeoutError:
            process.kill()
            await process.wait()
        if self.reader is not None:
            await self.reader
        self.process = None
