"""The transport-free server: one JSON-RPC message in, one reply out.

``Server.handle`` takes a message (JSON text as bytes, or a decoded value) and the facts only the
transport knows (principal, transport name, headers) and returns a ``Reply``: the
response, the request-scoped notifications that were not streamed, or an open
subscription. It does no I/O; stdio and HTTP are thin adapters around it.

The order in which a request is checked, and what each failed check answers, is
written once, in docs/request-checks.md.

The package is what registers and runs handlers: ``decorators`` (how an author
registers), ``registry`` and ``tools``, ``resources``, ``prompts`` (what is offered),
``invoke`` (calling a user function: ``threads`` for sync ones, ``dependencies``),
``methods`` (the method table handed to the core), ``lifespan`` (what a worker opens
once), ``routes`` (plain HTTP beside the endpoint, readiness), ``access`` (the verified
access token as a dependency), ``type_schemas`` (JSON Schemas of Python types),
``extensions`` (the public extension API: what an extension declares, its methods and
its hooks), ``subscriptions`` and ``notify_bus`` (listen streams and the bus that feeds
them across workers), ``callers`` (who a caller is, and ``ctx.user_state``, kept for
each across requests), ``visibility`` (who sees which item), ``transforms`` (tools under
a new shape), ``pagination``, ``schemas`` (tool schemas compiled once) and
``legacy_limits`` (what a legacy client may make the server keep). It may import the
core, ``snodo.asking``, ``snodo.stores`` and ``snodo.auth``; never the legacy era, a
transport, the client, an extension or OpenTelemetry.

The names an application uses are here: ``Server``, ``LegacyLimits``, ``Extension``,
the notification buses (``RedisBus``, ``notification_bus``), ``Request`` and
``Response`` for plain routes, and ``Token`` (the verified access token, as a handler
parameter).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, Never, Protocol, TypeVar

from pydantic import BaseModel

from snodo.auth.protected import ProtectedResource
from snodo.core.caching import CacheHint, hints
from snodo.core.context import Context, Emit
from snodo.core.envelope import check_version
from snodo.core.errors import MethodNotFound
from snodo.core.observe import QUIET, Observer
from snodo.core.request_path import CallNext, Middleware, Reply, answer
from snodo.core.state.keyring import server_keyring
from snodo.core.types import OpenStream, Outcome
from snodo.server.access import Token
from snodo.server.answer_checks import AnswerChecks, checking
from snodo.server.callers import CallerSpaces, UserStore
from snodo.server.configuration import (
    Caching,
    Limits,
    Publishing,
    Spec,
    State,
    check_page_size,
    chosen,
    refuse_moved,
    state_of,
)
from snodo.server.decorators import Decorators
from snodo.server.extensions import Extension, ExtensionMethod
from snodo.server.invoke import can_ask
from snodo.server.legacy_limits import LegacyLimits
from snodo.server.lifespan import Lifespan, Lifespans, StartupFailed, describe
from snodo.server.methods import ServerOffering, capabilities
from snodo.server.notify_bus import LocalBus, NotificationBus, RedisBus, notification_bus
from snodo.server.registry import Registry
from snodo.server.revised import check_flags
from snodo.server.routes import Request, Response, Route, RouteHandler, route
from snodo.server.settings import SettingsError
from snodo.server.settings import declared as declared_settings
from snodo.server.settings import read as read_settings
from snodo.server.shared_stores import redis_url, shared_stores
from snodo.server.subscriptions import Subscriptions
from snodo.server.threads import Threads
from snodo.server.tools import Tool
from snodo.server.transforms import ToolShape, prompt_tool, resource_tool, transformed
from snodo.server.versions import offered_revisions
from snodo.server.visibility import Item, Rule

__all__ = [
    "CacheHint",
    "Caching",
    "CallNext",
    "Extension",
    "LegacyLimits",
    "Limits",
    "LocalBus",
    "Middleware",
    "NotificationBus",
    "Publishing",
    "RedisBus",
    "Reply",
    "Request",
    "Response",
    "Server",
    "Spec",
    "State",
    "Token",
    "ToolSearchOption",
    "UserStore",
    "notification_bus",
]

log = logging.getLogger("snodo")

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_LEGACY_LIMITS = LegacyLimits()


class ToolSearchOption(Protocol):
    """What ``Server(tool_search=...)`` takes (``snodo.search.ToolSearch``): it puts
    itself between the server's tool methods and its catalog."""

    def attach(self, server: Server) -> None:
        """Answer ``server``'s tool methods from now on; the server calls it once."""
        ...


class Server(Decorators):
    """An MCP server: what it offers, and the transport-free core that answers requests.

    Register with the decorators (``@server.tool``, ``@server.resource(uri)``,
    ``@server.resource_template(template)``, ``@server.prompt``, ``@server.completion``,
    ``@server.middleware``: ``snodo.server.decorators``); serve it with a transport
    (``snodo run``, ``snodo.transports.stdio``, ``snodo.transports.http.HttpApp``) or call
    ``handle``. It holds no per-client state: any process with an equal ``State`` answers
    any round of a flow.

    - ``name``, ``version``, ``title``, ``description``: its ``Implementation``.
    - ``instructions``: what the client may tell its model about the server.
    - ``versions``: the protocol versions offered, each served one by default.
    - ``authorization``: OAuth (``snodo.auth.ProtectedResource``), items' ``scopes=`` checked.
    - ``hide_unauthorized``: lists show each caller only the items its scopes reach.
    - ``mask_errors``: a tool's untyped exception reaches the client without its text.
    - ``middleware``: runs around every handler, the first outermost (``snodo.middleware``).
    - ``extensions``: offered and installed (``snodo.server.extensions``; the Tasks
      extension is one: ``extensions=[Tasks(store)]``, ``snodo.extensions.tasks``).
    - ``tool_search``: ``tools/list`` shows a search tool (``snodo.search.ToolSearch``).
    - ``lifespan``: one or a list, entered by ``startup`` and left by ``shutdown``.
    - ``legacy``: the legacy era's ``LegacyLimits``, ``"stateless"``, or None: modern-only.
    - ``redis``: the Redis URL (else ``SNODO_REDIS``) every default store of workers shares.
    - ``notifications``: the bus to other workers' listen streams (``snodo.server.notify_bus``).
    - ``user_store``: where ``ctx.user_state`` is kept: a ``UserStore`` or a store's URL.
    - ``observer``: told of every request (``snodo.otel.OtelObserver``).
    - ``settings``: the pydantic model of what its user configures (``read_settings``).
    - ``state_secret``: the key request state is sealed with: ``state=State(secret=...)``.
    - ``state``: how request state is sealed and kept one-time (``State``).
    - ``caching``: the caching hints of lists, reads and discovery (``Caching``).
    - ``limits``: page size, listen streams, threads (``Limits``).
    - ``spec``: the revision catalog, added flags, answer checks (``Spec``).
    - ``publishing``: card name, repository, website and icons (``Publishing``).
    - ``moved``: none: a setting given flat that a group holds is refused with where it goes.

    The transports use ``handle`` (HTTP calls what it runs,
    ``snodo.core.request_path.answer``), ``check_version``, ``mirrored_headers``,
    ``close_subscription``, ``startup``, ``shutdown`` and ``authorization``. A gateway
    answers the feature methods with another server through
    ``server.offering.serve_backend`` (``snodo.server.backend``).
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        versions: Iterable[str] | None = None,
        authorization: ProtectedResource | None = None,
        hide_unauthorized: bool = False,
        mask_errors: bool = False,
        middleware: Sequence[Middleware] = (),
        extensions: Sequence[Extension] = (),
        tool_search: ToolSearchOption | None = None,
        lifespan: Lifespan | Sequence[Lifespan] | None = None,
        legacy: LegacyLimits | Literal["stateless"] | None = DEFAULT_LEGACY_LIMITS,
        redis: str | None = None,
        notifications: NotificationBus | None = None,
        user_store: UserStore | str | None = None,
        observer: Observer = QUIET,
        settings: type[BaseModel] | None = None,
        state_secret: bytes | None = None,
        state: State | None = None,
        caching: Caching | None = None,
        limits: Limits | None = None,
        spec: Spec | None = None,
        publishing: Publishing | None = None,
        **moved: Never,
    ) -> None:
        if moved:
            refuse_moved(moved)
        sealing = state_of(state_secret, state)
        caching = chosen("caching", caching, Caching)
        limits = chosen("limits", limits, Limits)
        spec = chosen("spec", spec, Spec)
        publishing = chosen("publishing", publishing, Publishing)
        info: dict[str, Any] = {"name": name, "version": version}
        for key, value in (
            ("title", title),
            ("description", description),
            ("websiteUrl", publishing.website_url),
        ):
            if value is not None:
                info[key] = value
        if publishing.icons:
            info["icons"] = [dict(icon) for icon in publishing.icons]
        revisions = spec.revisions
        modern, legacy_versions = offered_revisions(versions, spec.supported_versions, revisions)
        self.revisions = revisions
        self._modern = modern
        self.legacy_versions = legacy_versions
        """The legacy protocol versions offered, newest first (none: modern-only)."""
        self.versions = (*modern, *legacy_versions)
        """Every protocol version offered, modern ones first, each era newest first."""
        self.revisions_served = tuple(
            dict.fromkeys(revisions.of(version) for version in self.versions)
        )
        """The revisions of the versions offered, each once."""
        self.info = info
        self.cache = hints(caching.lists, caching.read, caching.discover)
        """The caching hint of each cacheable method (a resource's own overrides it)."""
        self.clock = sealing.clock
        self.redis = redis_url(redis)
        """The Redis URL the stores left at their defaults share (``SNODO_REDIS``)."""
        shared = shared_stores(
            self.redis,
            state_guard=sealing.guard,
            legacy=legacy,
            notifications=notifications,
            authorization=authorization,
            keyring_given=sealing.keyring is not None,
        )
        legacy, notifications = shared.legacy, shared.notifications
        self.keyring, self.state_per_process = server_keyring(
            sealing.keyring,
            sealing.secret,
            sealing.keys,
            sealing.ttl,
            shared.state_guard,
            sealing.encrypted,
            sealing.clock,
        )
        """Seals and verifies request state, and pins the questions a flow asked."""
        self.legacy = LegacyLimits(stateless=True) if isinstance(legacy, str) else legacy
        if not legacy_versions:  # versions= named no legacy version
            self.legacy = None
        """Bounds of the legacy (initialize-based) era the transports also serve, by
        default (snodo.legacy); ``"stateless"``: no legacy sessions; None makes the
        server modern-only."""
        self.middlewares: list[Middleware] = []
        users = (
            user_store
            if isinstance(user_store, UserStore)
            else UserStore(user_store or self.redis or "memory:")  # one Redis setting too
        )
        # Listen streams here; ``notifications`` (snodo.server.notify_bus) reaches other workers'.
        self.subscriptions = Subscriptions(limits.listen_streams, notifications or LocalBus())
        self._serving = False
        self.lifespans = Lifespans(lifespan)
        """Entered by ``startup``, left by ``shutdown``: ``ctx.lifespan`` is their value."""
        self.threads = Threads(limits.threads)
        """The threads sync handlers run in, ``Limits.threads`` at once (``inline`` ones
        run on the event loop)."""
        self.registry = Registry(self.subscriptions.list_changed, self.threads)
        """What is registered: tools, resources, templates, prompts, completions."""
        self.registry.visibility.changed = self.subscriptions.list_changed
        self.caller_space = CallerSpaces(users, self.registry.visibility)
        """What each request's context keeps for its caller: ``ctx.user_state`` and its
        own visibility (``snodo.server.callers``)."""
        self.offering = ServerOffering(
            self.registry,
            self.subscriptions,
            tuple(modern),
            modern,
            {version: (dict(r.methods), r) for version, r in modern.items()},
            instructions,
            limits.page_size,
            hide_unauthorized=hide_unauthorized,
            mask_errors=mask_errors,
        )
        self.extensions: dict[str, Extension] = {}
        """The extensions offered, by identifier (``add_extension``)."""
        self._observer: Observer = QUIET
        for extension in extensions:
            self.add_extension(extension)
        self.offering.given_capabilities = check_flags(
            spec.capabilities or {}, self.revisions_served
        )
        self.answer_checks = AnswerChecks(revisions) if checking(spec.check_answers) else None
        """Checks every answer against its request's revision (``Spec.check_answers``; None:
        not checked, ``SNODO_CHECK_ANSWERS`` deciding when not given)."""
        if tool_search is not None:
            tool_search.attach(self)
        self.observer = observer
        # OAuth (snodo.auth): HTTP verifies tokens with it; the core checks item scopes.
        self.authorization = authorization
        self.routes: dict[str, Route] = {}
        """Plain HTTP routes the HTTP app answers beside the endpoint (``route``)."""
        for each in middleware:
            self.middleware(each)
        if settings is not None:
            declared_settings(settings)  # a type no host can ask for fails here
        self.settings = settings
        """The model of what the user configures (``snodo.server.settings``)."""
        self.card_name = publishing.card_name
        """The name its Server Card and registry entry give it (``NAMESPACE/NAME``)."""
        self.repository = publishing.repository
        """Where its source is (a URL), for its card, registry entry and bundle."""

    def read_settings(self) -> Any:
        """The ``settings`` model read from the environment (``SettingsError`` says
        which variables are missing or wrong)."""
        if self.settings is None:
            raise SettingsError("the server declares no settings (Server(settings=...))")
        return read_settings(self.settings)

    def route(
        self, path: str, *, methods: Iterable[str] = ("GET",)
    ) -> Callable[[RouteHandler], RouteHandler]:
        """Answer plain HTTP at ``path`` beside the MCP endpoint, over HTTP only: the
        function takes a ``snodo.server.routes.Request`` and returns a ``Response``, a
        string or a JSON value. No MCP authentication applies (Host and Origin do)."""

        def register(handler: RouteHandler) -> RouteHandler:
            self.routes[path] = route(path, methods, handler)
            return handler

        return register

    @property
    def info(self) -> MappingProxyType[str, Any]:
        """The server's ``Implementation``, as given."""
        return self._info

    @info.setter
    def info(self, info: Mapping[str, Any]) -> None:
        self._info = MappingProxyType(dict(info))
        # What each served revision's answers stamp: only the fields it defines.
        self.infos = {
            version: MappingProxyType(revision.info(info))
            for version, revision in self._modern.items()
        }

    def method(self, name: str, *, params: type[BaseModel] | None = None) -> Callable[[F], F]:
        """``@server.method("tools/validate")``: serve a request a revision adds to the
        core (or any other), ``handler(ctx, params) -> result``, for modern requests.

        Its params are checked by the negotiated revision's generated model where that
        revision defines the method (then by ``params``, when given, for the handler);
        a revision that does not define it answers -32601 naming it, as for any method
        nobody serves.
        """

        def register(handler: F) -> F:
            core = any(name in revision.methods for revision in self.revisions.all)
            self.registry.extension_methods[name] = ExtensionMethod(
                name, params, handler, core=core
            )
            self.registry.modern_methods.add(name)
            return handler

        return register

    def add_extension(self, extension: Extension) -> Extension:
        """Offer an extension (``snodo.server.extensions``): advertised under
        ``extensions`` in the capabilities, its methods served (to legacy sessions too
        unless it was made with ``legacy=False``), its hooks plugged in. ValueError if
        another with its identifier is offered already."""
        if extension.id in self.extensions:
            raise ValueError(f"the extension {extension.id} is offered already")
        self.extensions[extension.id] = extension
        extension.install(self)
        extension.observe(self._observer)
        return extension

    def transform(
        self,
        tool: str,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        hide: Mapping[str, Any] | None = None,
        rename: Mapping[str, str] | None = None,
        keep: bool = False,
        tags: Iterable[str] | None = None,
    ) -> Tool:
        """Offer the tool ``tool`` under a new shape (``snodo.server.transforms``): as
        ``name``, with another ``title`` or ``description``, its arguments in ``hide``
        filled with their values (or computed from the ``Context`` by a function) and
        those in ``rename`` offered by their new names; ``tags`` its tags (else the
        original's). The original is offered no more unless ``keep``. Returns the new
        tool as listed."""
        original = self.registry.tools.get(tool)
        if original is None:
            raise KeyError(f"no tool named {tool!r} to transform")
        shape = ToolShape(name, title, description, dict(hide or {}), dict(rename or {}))
        visibility = self.registry.visibility
        marks = visibility.marks.get(("tools", tool))
        made = self.registry.add_tool(transformed(original, shape))
        if marks is not None or tags is not None:
            chosen = frozenset(tags) if tags is not None else marks.tags if marks else ()
            visibility.mark(
                "tools",
                made.name,
                {
                    "tags": chosen,
                    "enabled": marks is None or marks.enabled,
                    "visible": None if marks is None else marks.visible,
                },
            )
        if not keep and made.name != tool:
            self.registry.remove_tool(tool)
        return made

    def resource_as_tool(
        self, uri: str | None = None, *, name: str | None = None, description: str | None = None
    ) -> Tool:
        """A tool that reads the resource at ``uri`` (a template's variables are its
        arguments), for hosts that only call tools; with no ``uri``, one tool that reads
        any resource by its URI and lists them without one. It reads through the server's
        own ``resources/read``: what a caller may not read, it may not read this way."""
        found = self.registry.resources.get(uri) if uri is not None else None
        template = next((t for t in self.registry.templates if t.uri_template == uri), None)
        made = resource_tool(
            self._answer, uri, found or template, name=name, description=description
        )
        return self.registry.add_tool(made)

    def prompt_as_tool(
        self, prompt: str | None = None, *, name: str | None = None, description: str | None = None
    ) -> Tool:
        """A tool that gets the prompt ``prompt`` (its arguments the tool's), for hosts
        that only call tools; with no ``prompt``, one tool that gets any prompt by its
        name and lists them without one. It gets them through the server's own
        ``prompts/get``."""
        found = self.registry.prompts.get(prompt) if prompt is not None else None
        made = prompt_tool(self._answer, prompt, found, name=name, description=description)
        return self.registry.add_tool(made)

    async def _answer(self, ctx: Context, method: str, params: dict[str, Any]) -> Outcome:
        """``method`` as this server answers it, for a tool made of its resources or
        prompts (``snodo.server.transforms.Read``)."""
        offering = self.offering
        if not offering.offers(method):
            raise MethodNotFound(f"This server has no {method.split('/', maxsplit=1)[0]}")
        outcome: Outcome = await offering.methods[method](offering, ctx, params)
        return outcome

    def enable(
        self,
        *,
        names: str | Iterable[str] = (),
        tags: str | Iterable[str] = (),
        kinds: Iterable[str] | None = None,
        where: Callable[[Item], bool] | None = None,
    ) -> None:
        """Show every caller the items of these ``names`` or ``tags`` (or those ``where``
        accepts), of these ``kinds`` (``tools``, ``resources``, ``templates``,
        ``prompts``; all by default), from now on (``snodo.server.visibility``); the
        listen streams and legacy sessions of every worker hear the lists changed."""
        self.registry.visibility.server_rule(Rule.of(True, names, tags, kinds, where))

    def disable(
        self,
        *,
        names: str | Iterable[str] = (),
        tags: str | Iterable[str] = (),
        kinds: Iterable[str] | None = None,
        where: Callable[[Item], bool] | None = None,
    ) -> None:
        """Hide from every caller what ``enable`` would show: it answers as missing."""
        self.registry.visibility.server_rule(Rule.of(False, names, tags, kinds, where))

    def middleware(self, function: Middleware) -> Middleware:
        """Add a middleware; the first added is the outermost. One with an ``attach``
        method (``snodo.middleware``'s that listen for list changes) is attached here."""
        self.middlewares.append(function)
        attach = getattr(function, "attach", None)
        if callable(attach):
            attach(self)
        return function

    def notify_resource_updated(self, uri: str) -> int:
        """Tell every listen stream watching ``uri`` that it changed; how many were told."""
        return self.subscriptions.resource_updated(uri)

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> int:
        """Tell the listen streams that opted in that a list changed; how many were told."""
        return self.subscriptions.list_changed(f"{kind}ListChanged")

    def capabilities(self) -> dict[str, Any]:
        """The ServerCapabilities of what is registered, as server/discover answers."""
        return capabilities(self.offering)

    def check_version(self, version: str) -> None:
        """-32022 unless this server speaks ``version``."""
        check_version(version, self.offering.supported_versions)

    def mirrored_headers(self, tool_name: str) -> tuple[tuple[tuple[str, ...], str], ...]:
        """The ``Mcp-Param-*`` headers a call of this tool must carry (none if unknown)."""
        return self.registry.mirrored_headers(tool_name)

    @property
    def observer(self) -> Observer:
        """Hears each request, gauge and task (``snodo.core.observe``); ``QUIET`` costs nothing."""
        return self._observer

    @observer.setter
    def observer(self, observer: Observer) -> None:
        self._observer = observer
        for extension in self.extensions.values():
            extension.observe(observer)

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

    def asking(self) -> list[str]:
        """The tools, prompts, resources and templates whose handlers can ask the client
        (``can_ask``): where a replayed final retry would run the handler again unless a
        replay guard (``State.guard``) makes request state one-time."""
        registry = self.registry
        handlers = [
            *(("tool", name, item.invoker) for name, item in registry.tools.items()),
            *(("prompt", name, item.invoker) for name, item in registry.prompts.items()),
            *(("resource", uri, item.invoker) for uri, item in registry.resources.items()),
            *(("template", item.uri_template, item.invoker) for item in registry.templates),
        ]
        return [f"{kind} {name}" for kind, name, run in handlers if can_ask(run)]

    def end_listening(self) -> int:
        """End every open ``subscriptions/listen`` stream gracefully, with its completion
        result (basic/patterns/subscriptions.mdx), so a client can tell a shutdown from a
        fault; returns how many. Transports call it when a shutdown begins."""
        return self.subscriptions.end_all()

    async def shutdown(self) -> None:
        """Transports call this when serving ends: open listen streams end gracefully,
        the bus stops, the sync handlers' threads take no more calls, middleware with an
        ``aclose`` closes, and the lifespans are left in reverse order."""
        self._serving = False
        self.end_listening()
        try:
            await self.subscriptions.bus.stop()
            self.threads.close()
            for each in self.middlewares:  # a store's connections, made on this loop
                close = getattr(each, "aclose", None)
                if callable(close):
                    await close()
        finally:
            await self.lifespans.leave()

    def close_subscription(self, subscription: OpenStream) -> None:
        """Forget a listen stream; the transport calls this when the stream ends."""
        if self.observer is not QUIET and subscription in self.subscriptions:
            self.observer.listen_streams(-1)  # once, however often the transport closes it
        self.subscriptions.close(subscription)

    @property
    def supported_versions(self) -> tuple[str, ...]:
        return self.offering.supported_versions

    @property
    def instructions(self) -> str | None:
        return self.offering.instructions

    @property
    def page_size(self) -> int | None:
        return self.offering.page_size

    @page_size.setter
    def page_size(self, size: int | None) -> None:
        check_page_size(size)
        self.offering.page_size = size

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
        return await answer(self, message, principal, transport, headers, emit, scopes)
