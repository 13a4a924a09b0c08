"""The transport-free server: one JSON-RPC message in, one reply out.

``Server.handle`` takes a message (JSON text as bytes, or a decoded value) and the facts only the
transport knows (principal, transport name, headers) and returns a ``Reply``: the
response, the request-scoped notifications that were not streamed, or an open
subscription. It does no I/O; stdio and HTTP are thin adapters around it.

The order in which a request is checked, and what each failed check answers, is
written once, in docs/request-checks.md.

The package is what registers and runs handlers: ``decorators`` (how an author
registers), ``registry`` and ``tools``, ``resources``, ``prompts`` (what is offered),
``invoke`` (calling a handler: ``threads`` for sync ones, ``dependencies``),
``lifespan`` (what a worker opens once), ``type_schemas`` (JSON Schemas of Python types),
``dispatch`` (method to handler), ``subscriptions`` and ``notify_bus`` (listen streams
and the bus that feeds them across workers), ``pagination``, ``schemas`` (tool schemas
compiled once), ``eras`` (telling the eras apart) and ``legacy_limits`` (what a legacy
client may make the server keep). It may import the core, ``snodo.state``,
``snodo.tasks`` and ``snodo.auth``; never an era, transport, client or OpenTelemetry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from snodo import jsonrpc
from snodo.admission import admit
from snodo.answers import check_params
from snodo.auth.protected import ProtectedResource
from snodo.context import Context, Emit, check_log_level, request_context
from snodo.errors import (
    InsufficientScope,
    InternalError,
    McpError,
    MethodNotFound,
    UnsupportedProtocolVersion,
)
from snodo.observe import QUIET, Observation, Observer
from snodo.result import InputRequired
from snodo.server.backend import FORWARDED, Backend
from snodo.server.caching import NO_CACHE, CacheHint, hints
from snodo.server.decorators import Decorators
from snodo.server.dispatch import (
    HANDLERS,
    Outcome,
    Served,
    capabilities,
    forwarded,
    method_spec,
    offers,
)
from snodo.server.eras import refuse_initialize, required_meta
from snodo.server.extensions import Extension, tasks_extension
from snodo.server.legacy_limits import LegacyLimits
from snodo.server.lifespan import Lifespan, Lifespans, StartupFailed, describe
from snodo.server.notify_bus import LocalBus, NotificationBus
from snodo.server.registry import Registry
from snodo.server.subscriptions import MAX_OPEN_STREAMS, Subscription, Subscriptions
from snodo.server.threads import DEFAULT_THREAD_LIMIT, Threads
from snodo.state.keyring import Keyring, server_keyring
from snodo.state.replay import ReplayGuard
from snodo.state.sealing import NOTHING_ASKED, pinned, with_state
from snodo.state.token import DEFAULT_TTL
from snodo.tasks.engine import Tasks
from snodo_wire.protocol import (
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    SUPPORTED_PROTOCOL_VERSIONS,
)
from snodo_wire.tables import METHODS

__all__ = ["CacheHint", "LegacyLimits", "Middleware", "Reply", "Server"]

log = logging.getLogger("snodo")

CallNext = Callable[[Context], Awaitable[Any]]
Middleware = Callable[[Context, CallNext], Awaitable[Any]]
"""``async def mw(ctx, call_next)``: runs around every handler, on every retry too.

It may inspect the context, put things in ``ctx.state``, call ``call_next`` (with the
same context, or one whose ``state`` it replaced) and change what comes back. It cannot
change what the framework checks: the handler and admission see the framework-owned
fields of the original request whatever context is passed on.
"""

DEFAULT_LEGACY_LIMITS = LegacyLimits()


@dataclass(slots=True)
class Reply:
    """What ``handle`` gives a transport for one message, and what to send with it."""

    response: dict[str, Any] | None
    """None for a notification, and for an open subscription."""
    notifications: list[dict[str, Any]] = field(default_factory=list)
    """Request-scoped notifications, when no ``emit`` streamed them as they happened."""
    subscription: Subscription | None = None
    """An open subscriptions/listen stream; the transport closes it when the peer goes."""
    required_scopes: tuple[str, ...] | None = None
    """Every scope a request refused for insufficient scope needs (HTTP answers 403)."""

    @property
    def error_code(self) -> int | None:
        error = (self.response or {}).get("error")
        return int(error["code"]) if isinstance(error, dict) else None


_NO_RESPONSES: Mapping[str, Any] = MappingProxyType({})  # every first round's input_responses
_CACHEABLE = frozenset(name for name, spec in METHODS.items() if spec.cacheable)


class Server(Decorators):
    """An MCP server: what it offers, and the transport-free core that answers requests.

    Register with the decorators (``@server.tool``, ``@server.resource(uri)``,
    ``@server.resource_template(template)``, ``@server.prompt``, ``@server.completion``:
    ``snodo.server.decorators``, each with its ``add_*`` twin, and
    ``@server.middleware``); what is registered lives in ``registry``. Serve it with a
    transport (``snodo.transports.stdio``, ``snodo.transports.http.HttpApp``,
    ``snodo run``) or call ``handle`` directly.

    Sealed request state needs a ``keyring`` (``snodo.state.keyring.Keyring``), or the
    ``state_secret``/``state_keys`` conveniences with ``state_ttl``, ``state_encrypted``
    and ``state_guard`` (True: an in-process ``MemoryGuard``), which build one; they
    are checked here, so a bad key fails at start-up. Without them the secret comes from
    ``SNODO_STATE_SECRET``, else the server makes a key for this process alone
    (``state_per_process``): a flow's retry must then come back to this process.
    ``clock`` is the time source for state and guards. The server holds no per-client
    state: any process with an equal keyring answers any round of a flow. Sync handlers
    run in a pool of ``thread_limit`` threads unless registered ``inline``
    (``snodo.server.threads``); ``lifespan`` (one, or a list) is opened by ``startup``
    and closed by ``shutdown``, once per worker (``snodo.server.lifespan``).
    ``notifications`` carries list changes, resource updates and task status to the
    listen streams of other workers (``snodo.server.notify_bus``; by default they stay in
    this process). The transports use only ``handle``,
    ``check_version``, ``mirrored_headers``, ``close_subscription``, ``startup``,
    ``shutdown`` and (HTTP) ``authorization``: OAuth settings
    (``snodo.auth.ProtectedResource``), with which items registered with ``scopes=`` are
    checked against the scopes a transport grants; with ``hide_unauthorized`` the lists
    show each caller only the items its token's scopes reach (and say ``private``).
    ``list_cache`` is one caching hint for every list or one per list method,
    ``read_cache`` the reads' (a resource registered with ``cache=`` has its own), and
    ``icons`` go with ``title``, ``description`` and ``website_url`` in the server's
    ``Implementation``. With a ``backend`` (``snodo.server.backend``; ``snodo.gateway``
    makes them) the feature methods are answered by another server.
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        supported_versions: Iterable[str] = SUPPORTED_PROTOCOL_VERSIONS,
        page_size: int | None = None,
        list_cache: CacheHint | Mapping[str, CacheHint] = NO_CACHE,
        read_cache: CacheHint = NO_CACHE,
        discover_cache: CacheHint = NO_CACHE,
        clock: Callable[[], float] = time.time,
        state_secret: bytes | None = None,
        state_keys: Sequence[tuple[str, bytes]] | None = None,
        state_ttl: float = DEFAULT_TTL,
        state_guard: ReplayGuard | bool = False,
        state_encrypted: bool = False,
        keyring: Keyring | None = None,
        max_listen_streams: int = MAX_OPEN_STREAMS,
        legacy: LegacyLimits | Literal["stateless"] | None = DEFAULT_LEGACY_LIMITS,
        authorization: ProtectedResource | None = None,
        tasks: Tasks | None = None,
        notifications: NotificationBus | None = None,
        observer: Observer = QUIET,
        thread_limit: int = DEFAULT_THREAD_LIMIT,
        lifespan: Lifespan | Sequence[Lifespan] | None = None,
        hide_unauthorized: bool = False,
        extensions: Sequence[Extension] = (),
        backend: Backend | None = None,
    ) -> None:
        info: dict[str, Any] = {"name": name, "version": version}
        for key, value in (
            ("title", title),
            ("description", description),
            ("websiteUrl", website_url),
        ):
            if value is not None:
                info[key] = value
        if icons:
            info["icons"] = [dict(icon) for icon in icons]
        self.info: MappingProxyType[str, Any] = MappingProxyType(info)
        self.cache = hints(list_cache, read_cache, discover_cache)
        """The caching hint of each cacheable method (a resource's own overrides it)."""
        self.clock = clock
        self.keyring, self.state_per_process = server_keyring(
            keyring, state_secret, state_keys, state_ttl, state_guard, state_encrypted, clock
        )
        """Seals and verifies request state, and pins the questions a flow asked."""
        self.legacy = LegacyLimits(stateless=True) if isinstance(legacy, str) else legacy
        """Bounds of the legacy (initialize-based) era the transports also serve, by
        default (snodo.legacy); ``"stateless"``: no legacy sessions; None makes the
        server modern-only."""
        self.middlewares: list[Middleware] = []
        # Listen streams here; ``notifications`` (snodo.server.notify_bus) reaches other workers'.
        self.subscriptions = Subscriptions(max_listen_streams, notifications or LocalBus())
        self._serving = False
        self.lifespans = Lifespans(lifespan)
        """Entered by ``startup``, left by ``shutdown``: ``ctx.lifespan`` is their value."""
        self.threads = Threads(thread_limit)
        """The threads sync handlers run in, ``thread_limit`` at once (``inline`` ones
        run on the event loop)."""
        self.registry = Registry(self.subscriptions.list_changed, self.threads)
        if tasks is not None:  # the tasks extension, on the same footing as any other
            extensions = (*extensions, tasks_extension(tasks))
        for extension in extensions:
            self.registry.extensions[extension.id] = extension.settings
            self.registry.extension_methods.update(extension.methods)
            if not extension.legacy:
                self.registry.modern_methods.update(extension.methods)
        """What is registered: tools, resources, templates, prompts, completions."""
        self.served = Served(
            self.registry,
            self.subscriptions,
            tuple(supported_versions),
            instructions,
            page_size,
            tasks,
            hide_unauthorized,
            backend,
        )
        self.observer = observer
        # OAuth (snodo.auth): HTTP verifies tokens with it; the core checks item scopes.
        self.authorization = authorization

    def middleware(self, function: Middleware) -> Middleware:
        """Add a middleware; the first added is the outermost."""
        self.middlewares.append(function)
        return function

    def notify_resource_updated(self, uri: str) -> int:
        """Tell every listen stream watching ``uri`` that it changed; how many were told."""
        return self.subscriptions.resource_updated(uri)

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> int:
        """Tell the listen streams that opted in that a list changed; how many were told."""
        return self.subscriptions.list_changed(f"{kind}ListChanged")

    def capabilities(self) -> dict[str, Any]:
        """The ServerCapabilities of what is registered, as server/discover answers."""
        return capabilities(self.served)

    def check_version(self, version: str) -> None:
        """-32022 unless this server speaks ``version``."""
        if version not in self.served.supported_versions:
            raise UnsupportedProtocolVersion(version, list(self.served.supported_versions))

    def mirrored_headers(self, tool_name: str) -> tuple[tuple[tuple[str, ...], str], ...]:
        """The ``Mcp-Param-*`` headers a call of this tool must carry (none if unknown)."""
        return self.registry.mirrored_headers(tool_name)

    @property
    def observer(self) -> Observer:
        """Hears each request, gauge and task (``snodo.observe``); ``QUIET`` costs nothing."""
        return self._observer

    @observer.setter
    def observer(self, observer: Observer) -> None:
        self._observer = observer
        if self.served.tasks is not None:
            self.served.tasks.observer = observer

    async def startup(self) -> None:
        """Transports call this before serving: the lifespans are entered, then the
        notification bus starts carrying. A lifespan that fails raises here, before any
        request is taken. Nothing happens the second time."""
        if self._serving:
            return
        try:
            await self.lifespans.enter(self)
        except Exception as exc:
            raise StartupFailed(describe(exc)) from exc
        self._serving = True
        await self.subscriptions.bus.start(self.subscriptions.deliver)

    def end_listening(self) -> int:
        """End every open ``subscriptions/listen`` stream gracefully, with its completion
        result (basic/patterns/subscriptions.mdx), so a client can tell a shutdown from a
        fault; returns how many. Transports call it when a shutdown begins."""
        return self.subscriptions.end_all()

    async def shutdown(self) -> None:
        """Transports call this when serving ends: open listen streams end gracefully,
        the bus stops, the sync handlers' threads take no more calls, and the lifespans
        are left in reverse order."""
        self._serving = False
        self.end_listening()
        try:
            await self.subscriptions.bus.stop()
            self.threads.close()
        finally:
            await self.lifespans.leave()

    def close_subscription(self, subscription: Subscription) -> None:
        """Forget a listen stream; the transport calls this when the stream ends."""
        if self.observer is not QUIET and subscription in self.subscriptions:
            self.observer.listen_streams(-1)  # once, however often the transport closes it
        self.subscriptions.close(subscription)

    @property
    def supported_versions(self) -> tuple[str, ...]:
        return self.served.supported_versions

    @property
    def instructions(self) -> str | None:
        return self.served.instructions

    @property
    def page_size(self) -> int | None:
        return self.served.page_size

    @page_size.setter
    def page_size(self, size: int | None) -> None:
        self.served.page_size = size

    async def handle(
        self,
        message: bytes | Any,
        *,
        principal: str | None = None,
        transport: str = "memory",
        headers: Mapping[str, str] | None = None,
        emit: Emit | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Reply:
        """Answer one JSON-RPC message. Never raises for anything the peer sent.

        ``scopes``: what the caller's access token grants; None where the transport does
        no OAuth, which a server with ``authorization`` allows on stdio only.
        """
        if scopes is None and self.authorization is not None and transport != "stdio":
            scopes = ()  # a transport that forgot the scopes fails closed
        granted = None if scopes is None else frozenset(scopes)
        try:
            # Bytes are JSON text; anything else is an already decoded value (a str
            # included: a JSON string body is a value, never text to decode again).
            decoded = jsonrpc.decode(message) if isinstance(message, bytes) else message
            incoming = jsonrpc.parse(decoded)
        except McpError as exc:
            return Reply(jsonrpc.error_response(jsonrpc.error_id(exc), exc))
        if not isinstance(incoming, jsonrpc.Request):
            return Reply(None)  # notifications (cancellation) and stray responses
        observer = self._observer
        observation = None
        if observer is not QUIET:
            observation = observer.request(incoming, "modern", transport, headers or {})
        collected: list[dict[str, Any]] = []
        try:
            outcome = await self._request(
                incoming,
                principal,
                granted,
                transport,
                headers or {},
                emit or collected.append,
                observation,
            )
        except McpError as exc:
            needed = exc.scopes if isinstance(exc, InsufficientScope) else None
            reply = Reply(jsonrpc.error_response(incoming.id, exc), collected, None, needed)
        except Exception:
            log.exception("unexpected failure answering %s", incoming.method)
            reply = Reply(jsonrpc.error_response(incoming.id, InternalError()), collected)
        except BaseException:  # cancelled: the observation still ends
            if observation is not None:
                observation.cancelled()
            raise
        else:
            if isinstance(outcome, Subscription):
                reply = Reply(None, collected, outcome)
            else:
                reply = Reply(jsonrpc.result_response(incoming.id, outcome), collected)
        if observation is not None:
            if reply.subscription is not None:
                observer.listen_streams(1)
            observation.finish(reply.response)
        return reply

    async def _request(
        self,
        request: jsonrpc.Request,
        principal: str | None,
        scopes: frozenset[str] | None,
        transport: str,
        headers: Mapping[str, str],
        emit: Emit,
        observation: Observation | None,
    ) -> dict[str, Any] | Subscription:
        if request.method == "initialize":  # basic/versioning.mdx: name this core's versions
            refuse_initialize(request.params, self.supported_versions)
        spec = method_spec(request.method)
        handler = HANDLERS.get(request.method)
        if spec is None:  # an extension's own method (snodo.server.extensions), if any
            spec = handler = self.registry.extension_methods.get(request.method)
        elif self.served.backend is not None and request.method in FORWARDED:
            handler = forwarded
        if spec is None or handler is None or not offers(self.served, request.method):
            raise MethodNotFound(f"Method not found: {request.method}")
        params = request.params
        meta, version, declared = required_meta(params)
        self.check_version(version)
        checked_answers = check_params(spec.params, params, spec.input_required)
        responses = params.get("inputResponses")
        ctx = request_context(
            {
                "request_id": request.id,
                "request_method": request.method,
                "request_params": MappingProxyType(params),
                "protocol_version": version,
                "client_capabilities": MappingProxyType(declared),
                "client_info": meta.get(META_CLIENT_INFO),
                "log_level": check_log_level(meta.get(META_LOG_LEVEL)),
                "principal": principal,
                "scopes": scopes,
                "progress_token": meta.get("progressToken"),
                "input_responses": MappingProxyType(responses) if responses else _NO_RESPONSES,
                "checked_answers": checked_answers,
                "request_state": params.get("requestState"),
                "asked": NOTHING_ASKED,  # until the state says otherwise (with_state)
                "lifespan": self.lifespans.value,
                "transport": transport,
                "headers": headers,
                "clock": self.clock,
                "emit": emit,
            }
        )
        ctx = await with_state(self.keyring, ctx, observation)
        if self.middlewares:
            outcome = await self._through_middleware(ctx, handler)
        else:  # nothing in between: no chain to build, and no coroutine for one
            outcome = await handler(self.served, ctx, ctx.request_params)
        if isinstance(outcome, Subscription):
            return outcome
        return self._finish(ctx, outcome)

    async def _through_middleware(self, original: Context, handler: Any) -> Outcome:
        async def innermost(passed: Context) -> Outcome:
            # Only ``state`` travels from middleware to the handler.
            ctx = original if passed is original else replace(original, state=passed.state)
            outcome: Outcome = await handler(self.served, ctx, ctx.request_params)
            return outcome

        call: CallNext = innermost
        for middleware in reversed(self.middlewares):
            call = _wrap(middleware, call)
        outcome: Outcome = await call(original)
        return outcome

    def _finish(self, ctx: Context, outcome: Any) -> dict[str, Any]:
        if isinstance(outcome, InputRequired):
            result = admit(ctx.request_method, outcome, ctx.client_capabilities)
            state = pinned(self.keyring, ctx, outcome).request_state  # the questions
            if state is not None:
                result["requestState"] = state
        elif isinstance(outcome, dict):
            result = {"resultType": "complete", **outcome}
            if ctx.request_method in _CACHEABLE:
                hint = self.cache.get(ctx.request_method, NO_CACHE)
                result.setdefault("ttlMs", hint.ttl_ms)
                result.setdefault("cacheScope", hint.scope)
        else:
            log.error("%s produced %r, not a result", ctx.request_method, type(outcome).__name__)
            raise InternalError()
        meta = result.get("_meta")
        stamped = {META_SERVER_INFO: self.info.copy()}  # the proxy's dict, copied in C
        if isinstance(meta, dict):
            stamped.update(meta)
        result["_meta"] = stamped
        return result


def _wrap(middleware: Middleware, call_next: CallNext) -> CallNext:
    async def call(ctx: Context) -> Any:
        return await middleware(ctx, call_next)

    return call
