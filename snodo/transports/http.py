"""Streamable HTTP of the current revision as a plain ASGI application.

POST only, no sessions. Each POST carries one JSON-RPC message and gets one answer:
``application/json``, or ``text/event-stream`` when the request emits notifications
(progress, log messages) before its result, or opens a subscriptions/listen stream.
The answer is JSON unless a notification actually happens, so a plain call costs no
SSE framing.

The header layer checks what only HTTP carries (the number of header lines, then
``snodo.transports.http_head``: Host and Origin against DNS rebinding, method, content
type, Accept, body size; then authentication and the mirrored headers) before the
core sees the body, in the order docs/request-checks.md gives; then
``snodo.transports.http_exchange`` runs the request and answers it.

With OAuth (``Server(authorization=...)``, ``snodo.auth``) it also serves the resource
metadata, and answers 403 when the core refuses an item for its scopes. What it answers
beside the endpoint (a path under a mount prefix, the probes, a server's routes, CORS)
is ``snodo.transports.http_routes``'s; its Server Card, when the server has a
``card_name``, and the AI Catalog are ``snodo.transports.card_route``'s.
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from snodo.auth.protected import EndpointRequest, ProtectedResource, Refused
from snodo.core import jsonrpc
from snodo.core.context import ACCESS_TOKEN, PEER_ADDRESS, TOKEN_EXCHANGE
from snodo.core.envelope import check_version, required_meta
from snodo.core.errors import (
    HeaderMismatch,
    McpError,
    ParseError,
    UnsupportedProtocolVersion,
)
from snodo.core.http_headers import check_headers
from snodo.legacy.http import SESSION_HEADER, LegacyHttp, no_session_error
from snodo.legacy.wire import ASSUMED_VERSION, is_initialize
from snodo.server import Server
from snodo.transports.http_exchange import STATUS, Exchange, answered, send_json, send_plain
from snodo.transports.http_head import HeadRules, Plain, read_headers
from snodo.transports.http_routes import Aside
from snodo.transports.lifespan import lifespan, on_stop_signal, running
from snodo.transports.mounted import Mounted, route_mounts

__all__ = ["HttpApp", "Unauthorized"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
MAX_HEADER_LINES = 100
"""Header lines a request may carry (answered 431 beyond). Browsers and proxies send a
few dozen; counting is the only work done before refusing."""


class Unauthorized(Exception):
    """Raised by an authentication hook: answered with 401 and ``WWW-Authenticate``."""

    def __init__(self, www_authenticate: str = "Bearer") -> None:
        super().__init__("unauthorized")
        self.www_authenticate = www_authenticate


Authenticate = Callable[[Mapping[str, str]], Awaitable[str | None] | str | None]
"""Turns request headers (lower-case names) into a principal, or raises Unauthorized."""

PER_PROCESS_STATE = (
    "snodo: no state secret (Server(state_secret=...) or SNODO_STATE_SECRET): request"
    " state is sealed with a key of this process alone, so a flow's retry must come back here"
)
"""Said once at start-up over HTTP, where a second worker or a restart would refuse the
retries of flows this process began."""
NO_GUARD = (
    "snodo: %s can ask the client, and the server's replay guard is off (State(guard=False),"
    " or a keyring without a guard): a replayed final retry runs the handler again"
    " (the default guard for one process, SQLiteGuard or RedisGuard for several;"
    " docs/sealed-state.md)"
)
"""Said once at start-up over HTTP, where a request can be replayed by anyone who saw
it; over stdio only the host that started the process speaks."""


class PublishedDocuments(Protocol):
    """What the app answers for its Server Card (``snodo.transports.card_route``)."""

    paths: frozenset[str]

    async def answer(
        self, scope: Scope, headers: Mapping[str, str], head: HeadRules, send: Send
    ) -> None: ...


class HttpApp:
    """An ASGI app serving one ``Server`` at ``path`` (every path when None).

    Served with uvicorn directly, pass ``proxy_headers=False`` as ``snodo run`` does
    (unless ``--proxy-headers``): snodo reads neither the client address nor the scheme.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str | None = "/mcp",
        allowed_hosts: Iterable[str] | None = LOCAL_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_header_lines: int = MAX_HEADER_LINES,
        authenticate: Authenticate | None = None,
        authorization: ProtectedResource | None = None,
        cors_origins: Iterable[str] = (),
        health_path: str | None = None,
        ready_path: str | None = None,
        card_url: str | None = None,
        catalog: bool = False,
    ) -> None:
        self.server = server
        self.path = path
        self.head = HeadRules(
            path, allowed_hosts, allowed_origins, max_body_bytes, server.legacy is not None
        )
        self.max_body_bytes = max_body_bytes
        self.max_header_lines = max_header_lines
        self.authenticate = authenticate
        # Dual-era unless the server is modern-only: initialize-based sessions beside
        # the stateless path (snodo.legacy.http).
        self.legacy = None if server.legacy is None else LegacyHttp(server, server.legacy)
        self.legacy_stateless = server.legacy is not None and server.legacy.stateless
        """Every POST may be legacy then: a stateless legacy client sends no session."""
        self._unhook: Callable[[], None] = _nothing
        """Puts back the signal handlers the lifespan wrapped (``on_stop_signal``)."""
        # OAuth: given here, or configured on the server (what ``snodo run`` serves).
        self.authorization = server.authorization if authorization is None else authorization
        if self.authorization is not None and authenticate is not None:
            raise ValueError("pass authenticate= or an OAuth authorization, not both")
        # Beside the endpoint (snodo.transports.http_routes): mounting, probes, routes, CORS.
        self.aside = Aside(server, self.head, cors_origins, health_path, ready_path, max_body_bytes)
        self.head.cors_origins = self.aside.cors_origins
        self.cors = self.aside if self.aside.cors_origins else None
        """Only with CORS origins does the usual request pass through ``aside``."""
        self.mounts: list[Mounted] = []
        """Where a host framework mounted this app, found when its lifespan began."""
        self.published: PublishedDocuments | None = None
        """The Server Card (and with ``catalog`` the AI Catalog) beside the endpoint."""
        if server.card_name is not None:  # imported only by a server that has a card
            from snodo.transports.card_route import Published  # noqa: PLC0415

            self.published = Published(server, path, card_url, catalog)

    def lifespan(self, app: object = None) -> AbstractAsyncContextManager[None]:
        """What a host framework runs around serving when it mounts this app (FastAPI
        ``lifespan=``, Starlette's ``lifespan``): the server's lifespans, notification
        bus, stores and legacy sessions, started before the first request and stopped
        after the last. Mounted, the app itself is never sent the lifespan messages.

        Given the host ``app`` (as FastAPI and Starlette give it), the host also routes
        to this app the mount's own path and what it answers outside the mount, the
        OAuth metadata at the host's root (``snodo.transports.mounted``)."""
        if app is not None:
            self.mounts = route_mounts(app, self, self._outside())
            self._check_resource()
        return running(self._startup, self._stopped)

    def _outside(self) -> frozenset[str]:
        """The paths this app answers wherever it is mounted: the OAuth documents and
        endpoints, at the paths their URLs name."""
        if self.authorization is None:
            return frozenset()
        return self.authorization.metadata_paths | self.authorization.endpoint_paths

    def _check_resource(self) -> None:
        """A warning when the resource clients are told to ask tokens for is not where
        the endpoint is mounted: every token would be for another URL."""
        if self.authorization is None or not self.mounts or self.path is None:
            return
        below = self.path.rstrip("/")
        served = [mount.prefix + below for mount in self.mounts]
        resource = urllib.parse.urlsplit(self.authorization.resource).path.rstrip("/")
        if resource not in served:
            logging.getLogger("snodo").warning(
                "snodo: the endpoint is mounted at %s, but the OAuth resource %s names %s:"
                " clients will ask tokens for another URL (set the resource to the"
                " endpoint's URL)",
                " and ".join(served),
                self.authorization.resource,
                resource or "/",
            )

    async def _stopped(self) -> None:
        await self._shutdown()
        if self.legacy is not None:
            self.legacy.close()

    async def _startup(self) -> None:
        if self.server.state_per_process:
            logging.getLogger("snodo").warning(PER_PROCESS_STATE)
        if self.server.keyring.guard is None:
            asking = self.server.asking()
            if asking:
                shown = ", ".join(asking[:3]) + (
                    f" and {len(asking) - 3} more" if len(asking) > 3 else ""
                )
                logging.getLogger("snodo").warning(NO_GUARD, shown)
        await self.server.startup()
        if self.legacy is not None:
            await self.legacy.start()
        self._unhook = on_stop_signal(self._stopping)

    async def _shutdown(self) -> None:
        self._unhook()
        if self.legacy is not None:
            await self.legacy.stop()
        await self.server.shutdown()

    def _stopping(self) -> None:
        """A shutdown has begun: end what would otherwise hold it up, the listen streams
        gracefully (their completion result), legacy GET streams, and bridged rounds
        waiting for a legacy client's answer (a vanished client never sends one)."""
        self.server.end_listening()
        if self.legacy is not None:
            self.legacy.end_streams()
            self.legacy.end_rounds()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send, self._startup, self._shutdown)
            if self.legacy is not None:
                self.legacy.close()
            return
        if scope["type"] != "http":
            return
        if len(scope["headers"]) > self.max_header_lines:
            await send_plain(send, Plain(431, b"too many header lines"))
            return
        headers = read_headers(scope["headers"])
        published = self.published
        if published is not None and (
            scope["path"].removeprefix(scope.get("root_path", "")) in published.paths
        ):
            await published.answer(scope, headers, self.head, send)
            return
        if self.cors is not None:  # CORS headers for a listed browser origin
            send = self.cors.wrap(headers, send)
        if self.authorization is not None and scope["path"] in self.authorization.metadata_paths:
            # Public, but still only under an allowed Host.
            if not self.head.host_allowed(headers.get("host", "")):
                await send_plain(send, Plain(421, b"misdirected request: host not allowed"))
            else:
                await send_plain(
                    send, answered(self.authorization.metadata_answer(scope["method"]))
                )
            return
        if self.authorization is not None and scope["path"] in self.authorization.endpoint_paths:
            await self._endpoint(scope, headers, receive, send)
            return
        refusal = self.head.refuse(scope, headers)
        if refusal is not None:  # unless it is for what is beside the endpoint
            await self.aside.answer(self, scope, headers, refusal, receive, send)
            return
        principal = None
        scopes: frozenset[str] | None = None
        if self.authorization is not None:
            # Before the body is read: a caller without a good token costs no buffering.
            try:
                authorized = await self.authorization.authorize(headers, scope["method"])
            except Refused as refused:
                await send_plain(send, answered(refused.answer))
                return
            principal, scopes = authorized.principal, authorized.scopes
            ACCESS_TOKEN.set(authorized.token)  # for the handler's context
            if authorized.exchange is not None:
                TOKEN_EXCHANGE.set(authorized.exchange)
        body: bytes | Plain = b""
        if scope["method"] == "POST":
            # A body almost always comes whole in one message: taken here, with no
            # coroutine more; anything else is read by _rest_of_body.
            first = await receive()
            whole = first.get("body", b"")
            if (
                first["type"] != "http.request"
                or first.get("more_body", False)
                or type(whole) is not bytes  # joined into bytes there
                or len(whole) > self.max_body_bytes
            ):
                body = await self._rest_of_body(first, receive)
            else:
                body = whole
        if isinstance(body, Plain):
            await send_plain(send, body)
            return
        if self.authenticate is not None:
            try:
                found = self.authenticate(headers)
                principal = await found if isinstance(found, Awaitable) else found
            except Unauthorized as exc:
                await send_plain(
                    send,
                    Plain(
                        401,
                        b"unauthorized",
                        extra=((b"www-authenticate", exc.www_authenticate.encode()),),
                    ),
                )
                return
        if self.server.middlewares:  # what a middleware may count a caller by
            client = scope.get("client")
            PEER_ADDRESS.set(str(client[0]) if client else None)
        if self.legacy is not None and scope["method"] == "GET":  # with a session id
            await self.legacy.get(headers, principal, receive, send)
        elif self.legacy is not None and scope["method"] == "DELETE":
            await self.legacy.delete(headers, principal, send)
        else:
            await self._exchange(body, headers, principal, scopes, receive, send, scope)

    async def _endpoint(
        self, scope: Scope, headers: Mapping[str, str], receive: Receive, send: Send
    ) -> None:
        """An authorization server's endpoint beside the MCP one (``snodo.auth.proxy``):
        under an allowed Host, its body read within the limit, answered as it says."""
        assert self.authorization is not None
        if not self.head.host_allowed(headers.get("host", "")):
            await send_plain(send, Plain(421, b"misdirected request: host not allowed"))
            return
        body: bytes | Plain = b""
        if scope["method"] == "POST":
            body = await self._rest_of_body(await receive(), receive)
        if isinstance(body, Plain):
            await send_plain(send, body)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        client = scope.get("client")
        address = str(client[0]) if client else None
        request = EndpointRequest(scope["method"], scope["path"], query, headers, body, address)
        await send_plain(send, answered(await self.authorization.endpoint(request)))

    async def _rest_of_body(self, first: Message, receive: Receive) -> bytes | Plain:
        """The whole body from its ``first`` message on, or the answer refusing it."""
        chunks: list[bytes] = []
        size = 0
        message = first
        while True:
            if message["type"] == "http.disconnect":
                return Plain(400, b"client went away")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return Plain(413, b"request body too large")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
            message = await receive()

    def _preflight(
        self, message: Any, headers: Mapping[str, str], scopes: frozenset[str] | None
    ) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
        """The header checks that need the body, before the core sees it; for a request,
        what ``required_meta`` gives, its version checked, which the core then takes."""
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return None  # the core answers envelope errors
        if "id" not in message:
            return None  # notifications: header rules are not defined by this revision
        header_version = headers.get("mcp-protocol-version")
        if header_version is None:
            raise HeaderMismatch("Header mismatch: MCP-Protocol-Version header is required")
        params = message.get("params")
        checked = required_meta(params)
        version = checked[1]
        if header_version != version and header_version.strip() != version:
            raise HeaderMismatch(
                "Header mismatch: MCP-Protocol-Version does not match the body's protocolVersion"
            )
        check_version(version, self.server.offering.supported_versions)
        assert isinstance(params, dict)
        mirrored: tuple[tuple[tuple[str, ...], str], ...] = ()
        method = message["method"]
        if method == "tools/call":  # the called tool's Mcp-Param-* headers, if any
            name = params.get("name")
            tool = self.server.registry.tools.get(name) if type(name) is str else None
            if tool is not None and scopes is not None and self.server.offering.hide_unauthorized:
                # A tool hidden from this caller has no headers to check, as a missing one.
                tool = tool if tool.scopes <= scopes else None
            mirrored = () if tool is None else tool.headers
        check_headers(headers, method, params, mirrored)
        return checked

    def _legacy_route(
        self,
        message: Any,
        headers: Mapping[str, str],
        principal: str | None,
        scopes: frozenset[str] | None,
        send: Send,
        scope: Scope,
    ) -> Awaitable[None] | None:
        """What answers a POST of the legacy era, or None for a modern one."""
        if self.legacy is not None and self.legacy.claims(message, headers):
            client = scope.get("client")
            address = client[0] if client else None
            return self.legacy.post(message, headers, principal, send, scopes, address)
        if not (is_initialize(message) or LegacyHttp.sessionless(message, headers)):
            return None
        # An initialize-based client, which a header cannot help (basic/versioning.mdx):
        # a modern-only server names its versions, a dual-era one asks for a session.
        raw_id = message.get("id")
        if self.legacy is not None:
            response = no_session_error()
        else:
            params = message.get("params")
            asked = params.get("protocolVersion") if isinstance(params, dict) else None
            # The legacy transport: no version header and no session, assume the oldest.
            refusal = UnsupportedProtocolVersion(
                asked
                if isinstance(asked, str)
                else headers.get("mcp-protocol-version", ASSUMED_VERSION),
                list(self.server.supported_versions),
            )
            readable = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
            response = jsonrpc.error_response(raw_id if readable else None, refusal)
        return send_json(send, 400, response)

    def _exchange(
        self,
        body: bytes,
        headers: Mapping[str, str],
        principal: str | None,
        scopes: frozenset[str] | None,
        receive: Receive,
        send: Send,
        scope: Scope,
    ) -> Awaitable[None]:
        """What answers this POST, to be awaited: a plain function handing back the
        sending or the exchange, so a request runs one coroutine fewer deep."""
        try:
            message = jsonrpc.decode(body)
        except ParseError as exc:
            return send_json(send, 400, jsonrpc.error_response(None, exc))
        # A version header, no session and no initialize: no route of
        # ``_legacy_route`` can take it, so the usual modern request skips its checks.
        if (
            type(message) is not dict
            or message.get("method") == "initialize"
            or "mcp-protocol-version" not in headers
            or SESSION_HEADER in headers
            or self.legacy_stateless
        ):
            legacy = self._legacy_route(message, headers, principal, scopes, send, scope)
            if legacy is not None:
                return legacy
        try:
            checked = self._preflight(message, headers, scopes)
        except McpError as exc:
            raw_id = message.get("id") if isinstance(message, dict) else None
            readable = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
            response = jsonrpc.error_response(raw_id if readable else None, exc)
            return send_json(send, STATUS.get(exc.code, 200), response)
        streams = "text/event-stream" in headers.get("accept", "")
        if (
            not streams
            and isinstance(message, dict)
            and message.get("method") == "subscriptions/listen"
        ):
            return send_plain(send, Plain(406, b"subscriptions/listen needs text/event-stream"))
        return Exchange(
            self.server,
            message,
            headers,
            principal,
            scopes,
            self.authorization,
            streams,
            receive,
            send,
            checked,
        ).run()


def _nothing() -> None:
    return None
