"""What ``HttpApp`` answers beside its MCP endpoint, all off the usual request's path.

A request whose head ``http_head`` refused comes here before it is answered: under a
mount prefix (ASGI ``root_path``: the app mounted in FastAPI or Starlette) its path is
read without the prefix and the request taken again; the health and readiness probes
and the server's own routes (``snodo.server.routes``) answer their paths; a CORS
preflight from a listed origin is answered. Only a CORS origin list costs the usual
request anything: one check, and, for a listed browser origin, the CORS headers added
to its answer (``wrap``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any

from snodo.server import Server
from snodo.server.routes import Request, Response, Route, ready
from snodo.transports.http_exchange import send_plain
from snodo.transports.http_head import HeadRules, Plain

__all__ = ["ALLOWED_HEADERS", "EXPOSED_HEADERS", "Aside", "CorsSend"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

ALLOWED_HEADERS = (
    "content-type",
    "accept",
    "authorization",
    "dpop",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "traceparent",
    "tracestate",
)
"""What a browser client may send besides the tools' ``Mcp-Param-*`` headers."""
EXPOSED_HEADERS = b"mcp-session-id, mcp-protocol-version, www-authenticate, retry-after, dpop-nonce"
"""What a browser client may read of an answer: without ``mcp-session-id`` no legacy
session can go on, without ``www-authenticate`` no OAuth flow can begin, without
``dpop-nonce`` no DPoP proof can carry the server's nonce."""
MAX_AGE = b"600"
"""Seconds a browser may keep a preflight's answer."""


class CorsSend:
    """``send`` with the CORS headers for one listed origin added to the answer."""

    __slots__ = ("inner", "origin")

    def __init__(self, inner: Send, origin: str) -> None:
        self.inner = inner
        self.origin = origin.encode("latin-1")

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", ()))
            # An answer readable from any origin already (the OAuth metadata) keeps its
            # own: a browser refuses an answer naming two.
            if not any(name == b"access-control-allow-origin" for name, _ in headers):
                headers.append((b"access-control-allow-origin", self.origin))
                headers.append((b"vary", b"origin"))
            headers.append((b"access-control-expose-headers", EXPOSED_HEADERS))
            message["headers"] = headers
        await self.inner(message)


class Aside:
    """The answers of one ``HttpApp`` beside its endpoint, with their settings."""

    def __init__(
        self,
        server: Server,
        head: HeadRules,
        cors_origins: Iterable[str],
        health_path: str | None,
        ready_path: str | None,
        max_body_bytes: int,
    ) -> None:
        self.server = server
        self.head = head
        self.cors_origins = frozenset(cors_origins)
        self.health_path = health_path
        self.ready_path = ready_path
        self.max_body_bytes = max_body_bytes
        methods = "POST, GET, DELETE, OPTIONS" if head.sessions else "POST, OPTIONS"
        self.methods = methods.encode()

    def wrap(self, headers: Mapping[str, str], send: Send) -> Send:
        """``send``, adding the CORS headers when the request comes from a listed origin."""
        origin = headers.get("origin")
        if origin is None or origin not in self.cors_origins or isinstance(send, CorsSend):
            return send
        return CorsSend(send, origin)

    async def answer(
        self,
        app: App,
        scope: MutableMapping[str, Any],
        headers: Mapping[str, str],
        refusal: Plain,
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer a request the head checks refused, unless it is one of ours."""
        path: str = scope["path"]
        if refusal.status == 404:
            root = scope.get("root_path", "")
            if root and (path == root or path.startswith(root + "/")):
                # Mounted: the path below the prefix (the prefix itself is the mount's
                # root, "/"), taken again from the start.
                inner = send.inner if isinstance(send, CorsSend) else send
                below = path[len(root) :] or "/"
                await app({**scope, "path": below, "root_path": ""}, receive, inner)
                return
            if self._serves(path):
                await self._route(scope, headers, receive, send)
                return
        elif (
            refusal.status == 405
            and scope["method"] == "OPTIONS"
            and headers.get("origin") in self.cors_origins
        ):
            await send_plain(send, self.preflight(headers))
            return
        await send_plain(send, refusal)

    def _serves(self, path: str) -> bool:
        return path in (self.health_path, self.ready_path) or path in self.server.routes

    def preflight(self, headers: Mapping[str, str]) -> Plain:
        """204 to a listed origin's preflight: the methods, and every header a client
        of this server sends, the tools' mirrored ones included."""
        mirrored = {
            "mcp-param-" + name.lower()
            for tool in self.server.registry.tools.values()
            for _, name in tool.headers
        }
        allowed = ", ".join([*ALLOWED_HEADERS, *sorted(mirrored)])
        # The origin, and its Vary, are added by CorsSend: the preflight came with it.
        return Plain(
            204,
            extra=(
                (b"access-control-allow-methods", self.methods),
                (b"access-control-allow-headers", allowed.encode()),
                (b"access-control-max-age", MAX_AGE),
            ),
        )

    async def _route(
        self,
        scope: MutableMapping[str, Any],
        headers: Mapping[str, str],
        receive: Receive,
        send: Send,
    ) -> None:
        # The path passed no head check: Host and Origin first, as for the endpoint.
        if not self.head.host_allowed(headers.get("host", "")):
            await send_plain(send, Plain(421, b"misdirected request: host not allowed"))
            return
        origin = headers.get("origin")
        if origin is not None and not self.head.origin_allowed(origin):
            await send_plain(send, Plain(403, b"forbidden: origin not allowed"))
            return
        path, method = scope["path"], scope["method"]
        if path in (self.health_path, self.ready_path):
            if method not in ("GET", "HEAD"):
                await send_plain(send, Plain(405, b"method not allowed", extra=_ALLOW_GET))
                return
            await _send_response(send, await self._probe(path == self.ready_path), method)
            return
        route: Route = self.server.routes[path]
        if method not in route.methods:
            allow = ", ".join(sorted(route.methods)).encode()
            await send_plain(send, Plain(405, b"method not allowed", extra=((b"allow", allow),)))
            return
        body = await _body(receive, self.max_body_bytes)
        if body is None:
            await send_plain(send, Plain(413, b"request body too large"))
            return
        query = scope.get("query_string", b"").decode("latin-1")
        request = Request(method, path, query, headers, body)
        await _send_response(send, await route.answer(request), method)

    async def _probe(self, readiness: bool) -> Response:
        if not readiness:
            return Response(200, b'{"status":"ok"}', "application/json")
        failed = await ready(self.server)
        if failed:
            body = json.dumps({"status": "not ready", "failed": failed}).encode()
            return Response(503, body, "application/json")
        return Response(200, b'{"status":"ready"}', "application/json")


_ALLOW_GET = ((b"allow", b"GET, HEAD"),)


async def _body(receive: Receive, limit: int) -> bytes | None:
    """A route's whole request body, or None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _send_response(send: Send, response: Response, method: str) -> None:
    headers = [
        (b"content-type", response.content_type.encode("latin-1")),
        (b"content-length", b"%d" % len(response.body)),
        (b"cache-control", b"no-store"),
        *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()),
    ]
    start = {"type": "http.response.start", "status": response.status, "headers": headers}
    await send(start)
    await send({"type": "http.response.body", "body": b"" if method == "HEAD" else response.body})
