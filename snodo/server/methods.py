"""One function per client method; ``HANDLERS`` maps method names to them.

This is the method table the server hands the core (``snodo.core.request_path``). Each
handler takes what the server serves (a ``ServerOffering``: the registry, the
subscriptions and the few facts ``server/discover`` reports), the request's Context and
its params (already validated against the generated params model, read as plain
JSON), and returns the result without ``resultType`` (the core adds it, the caching
hints and ``_meta``), an ``InputRequired`` for the three methods that may ask for input,
or an open ``Subscription`` for subscriptions/listen.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from functools import partial
from inspect import isawaitable
from typing import Any, Final, Protocol

from snodo.core.context import Context
from snodo.core.errors import (
    InternalError,
    InvalidParams,
    McpError,
    ResourceNotFound,
    caused_by,
)
from snodo.core.result import InputRequired, ToolError
from snodo.core.types import ExtensionMethod, MethodHandler, Outcome, Params
from snodo.revisions import REVISIONS, Revision
from snodo.server.backend import FEATURES, FORWARDED, Backend
from snodo.server.callers import caller_of
from snodo.server.dependencies import DependencyFailed
from snodo.server.extensions import Answered, Listening, ToolCalls
from snodo.server.invoke import PLAIN, FailedCall, TimedOut
from snodo.server.pagination import page
from snodo.server.prompts import prompt_messages
from snodo.server.registry import Registry
from snodo.server.resources import read_contents
from snodo.server.revised import merged, shaped_items
from snodo.server.subscriptions import Subscriptions, check_resource_subscriptions
from snodo.server.tool_encoders import encoder_of
from snodo.server.tools import failure, plain_bind
from snodo.server.visibility import Kind, View

__all__ = [
    "HANDLERS",
    "SearchLayer",
    "ServerOffering",
    "capabilities",
    "forwarded",
    "offers",
    "revised_items",
    "view_of",
    "visible_definitions",
]

log = logging.getLogger("snodo")


class SearchLayer(Protocol):
    """What stands between a server's tool methods and its catalog when it searches
    (``Server(tool_search=...)``, ``snodo.search``): the method table routes
    ``tools/list`` and ``tools/call`` to it; it answers those of the tools it adds and
    hands every other call to the handler the table would have had without it (that of
    a copy of the offering made with ``search_with(None)``)."""

    async def handle(self, served: ServerOffering, ctx: Context, params: Params) -> Outcome:
        """The answer to a ``tools/list`` or ``tools/call`` of the server ``served``."""
        ...


@dataclass(slots=True)
class ServerOffering:
    """All that dispatch reads: what is registered, the open subscriptions, and what
    ``server/discover`` and the list methods report besides."""

    registry: Registry
    subscriptions: Subscriptions
    supported_versions: tuple[str, ...]
    """The modern protocol versions served, newest first."""
    revisions: dict[str, Revision]
    """The revision of each of them (``snodo.revisions``): what checks its requests."""
    tables: dict[str, tuple[dict[str, Any], Revision]]
    """Each version's revision's method table, as a plain dict, and the revision: the
    request path's one lookup, by version, then by method."""
    instructions: str | None = None
    page_size: int | None = None
    hide_unauthorized: bool = False
    """Lists show a caller only the items whose scopes its token grants."""
    backend: Backend | None = None
    """The server whose features this one serves (``snodo.server.backend``)."""
    mask_errors: bool = False
    """A tool's untyped exception reaches the client as a generic message, the detail
    only in the log (``Server(mask_errors=True)``)."""
    calls: tuple[ToolCalls, ...] = ()
    """The extensions' hooks around each tool call."""
    listening: tuple[Listening, ...] = ()
    """The listen members the extensions honour."""
    given_capabilities: Mapping[str, Any] = field(default_factory=dict)
    """Flags the author gave (``Server(spec=Spec(capabilities=...))``), merged into what is
    advertised; each revision's answers keep those it defines."""
    tool_search: SearchLayer | None = None
    """Tool search (``Server(tool_search=...)``): answers the tool methods first."""

    methods: Mapping[str, MethodHandler] = field(init=False)
    """The table the core looks methods up in: ``HANDLERS``, or, with a backend, the
    feature methods answered by it."""

    def __post_init__(self) -> None:
        self._table()

    def serve_backend(self, backend: Backend | None) -> None:
        """Answer the feature methods with ``backend`` from now on (None: with the
        server's own items again)."""
        self.backend = backend
        self._table()

    def search_with(self, layer: SearchLayer | None) -> None:
        """Answer ``tools/list`` and ``tools/call`` through ``layer`` from now on (None:
        without a search)."""
        self.tool_search = layer
        self._table()

    def _table(self) -> None:
        methods: Mapping[str, MethodHandler] = HANDLERS
        if self.backend is not None:
            methods = {**HANDLERS, **dict.fromkeys(FORWARDED, forwarded)}
        if self.tool_search is not None:
            handle = self.tool_search.handle
            methods = {**methods, "tools/list": handle, "tools/call": handle}
        self.methods = methods

    @property
    def extension_methods(self) -> Mapping[str, ExtensionMethod]:
        return self.registry.extension_methods

    def offers(self, method: str) -> bool:
        """Whether a method's feature is on offer, here or at the backend."""
        if self.backend is None:
            return self.registry.offers(method)
        return offers(self, method)


def capabilities(served: ServerOffering) -> dict[str, Any]:
    """What the server offers: what is registered, and its backend's features."""
    offered = served.registry.capabilities()
    if served.backend is not None:
        theirs = served.backend.capabilities()
        for feature in FEATURES:
            offered.pop(feature, None)
            if isinstance(theirs.get(feature), Mapping):
                offered[feature] = dict(theirs[feature])
    if served.given_capabilities:
        offered = merged(offered, served.given_capabilities)
    return offered


def offers(served: ServerOffering, method: str) -> bool:
    """Whether a method's feature is on offer, here or at the backend."""
    if served.backend is not None and method in FORWARDED:
        feature = method.split("/", 1)[0]
        feature = "completions" if feature == "completion" else feature
        return isinstance(served.backend.capabilities().get(feature), Mapping)
    return served.registry.offers(method)


async def forwarded(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    """A feature method answered by the backend."""
    assert served.backend is not None  # routed here only when there is one
    given = {key: value for key, value in params.items() if key != "_meta"}
    return await served.backend.forward(ctx, given)


async def discover(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    # What the request's revision defines of them: a flag another adds stays out.
    capabilities_ = capabilities(served)
    revision = served.revisions.get(ctx.protocol_version)
    if revision is not None:
        capabilities_ = revision.capabilities(capabilities_)
    result: dict[str, Any] = {
        "supportedVersions": list(served.supported_versions),
        "capabilities": capabilities_,
    }
    if served.instructions:
        result["instructions"] = served.instructions
    return result


async def view_of(served: ServerOffering, ctx: Context) -> View | None:
    """What hides items from this caller (``snodo.server.visibility``: its rules and the
    extensions' hooks); None: nothing."""
    visibility = served.registry.visibility
    if not visibility.active:
        return None
    return await visibility.view(ctx, caller_of(ctx))


_KEYS: Final = {"tools": "name", "prompts": "name", "resources": "uri", "templates": "uriTemplate"}


def is_hidden(served: ServerOffering, ctx: Context, scopes: frozenset[str]) -> bool:
    """Whether an item needing ``scopes`` is hidden from this caller
    (``hide_unauthorized``): then it answers exactly as an item that does not exist,
    so that what a caller cannot see it cannot find by asking for it either."""
    granted = ctx.scopes
    return served.hide_unauthorized and granted is not None and not scopes <= granted


def visible_definitions(
    served: ServerOffering,
    ctx: Context,
    kind: Kind,
    view: View | None = None,
) -> tuple[list[Any], bool]:
    """The definitions of ``kind`` this caller may see (``view``: what hides items from
    it), in registration order, and whether the list is this caller's own (it differs
    by caller: never to be shared)."""
    filtered = served.hide_unauthorized and ctx.scopes is not None
    items = served.registry.definitions(kind, ctx.scopes if filtered else None)
    if view is not None:
        key = _KEYS[kind]
        items = [item for item in items if not view.hides(kind, item[key])]
        filtered = filtered or view.private(kind)
    return items, filtered


def revised_items(
    served: ServerOffering, revision: Revision | None, kind: Kind, items: list[Any]
) -> list[Any]:
    """Registered definitions of ``kind`` as ``revision`` lists them: a tool as the
    revision declares one (``snodo.server.tool_encoders``), each item with the fields
    the revision defines."""
    if kind == "tools":
        items = encoder_of(revision).listed(items)
    if revision is not None and (served.registry.revised or not revision.authoring):
        items = shaped_items(items, kind, revision)
    return items


async def _listing(
    served: ServerOffering, ctx: Context, params: Params, key: str, kind: Kind
) -> Outcome:
    view = await view_of(served, ctx) if served.registry.visibility.active else None
    items, filtered = visible_definitions(served, ctx, kind, view)
    items = revised_items(served, ctx.revision, kind, items)
    chosen, next_cursor = page(items, ctx.request_method, params.get("cursor"), served.page_size)
    result: dict[str, Any] = {key: list(chosen)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    if filtered:  # this caller's list: never to be shared with another
        result["cacheScope"] = "private"
    return result


async def tools_list(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    return await _listing(served, ctx, params, "tools", "tools")


async def tools_call(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    name = params["name"]
    tool = served.registry.tools.get(name)
    if tool is None or is_hidden(served, ctx, tool.scopes):
        raise InvalidParams(f"Unknown tool: {name}")
    if served.registry.visibility.active:
        view = await view_of(served, ctx)
        if view is not None and view.hides("tools", name):
            raise InvalidParams(f"Unknown tool: {name}")
    if ctx.scopes is not None:  # OAuth: checked before the arguments are looked at
        ctx.require_scopes(tool.scopes)
    calls = served.calls
    if calls:  # the extensions' hooks: each may refuse the call
        for hook in calls:
            hook.before(tool, ctx)
    encoder = encoder_of(ctx.revision)  # the revision's result shape
    selection = encoder.selection(tool, params)
    arguments = params.get("arguments") or {}
    # Arguments of their parameters' exact plain types are valid against the schema made
    # from those parameters: bound so, they need no schema check (tools.plain_bind).
    bound = None if tool.plain is None else plain_bind(tool.plain, arguments)
    if bound is None:
        reason = tool.arguments.first_error(arguments)
        if reason is not None:
            invalid = ToolError(f"Invalid arguments for tool {name}: {reason}")
            return encoder.finish(tool, invalid, ctx.revision, selection)
    invoker = tool.invoker
    try:
        if bound is None:
            bound = tool.bind(arguments)  # a new dict
        if invoker.direct:  # the function itself, called from here: nothing around it
            if invoker.context_param is not None:
                bound[invoker.context_param] = ctx
            value = invoker.function(**bound)
        else:
            value = invoker.start(ctx, bound)
        if type(value) not in PLAIN and (invoker.is_async or isawaitable(value)):
            value = await value
    except McpError:
        raise
    except ToolError as raised:  # raised by the tool or a dependency: its answer
        value = raised
    except DependencyFailed as failed:
        log.warning("tool %s: %s", name, failed, exc_info=failed.__cause__)
        raise InternalError() from None
    except Exception as exc:  # its result, carrying the exception for middleware
        failed_with = failure(tool, exc, served.mask_errors)
        return FailedCall(encoder.finish(tool, failed_with, ctx.revision, selection), exc)
    if calls:  # each may turn the value into another, or answer the call itself
        finish = partial(encoder.finish, tool, revision=ctx.revision, selection=selection)
        for hook in calls:
            value = await hook.after(tool, ctx, value, finish)
            if type(value) is Answered:
                return value.outcome
    if isinstance(value, InputRequired):
        return value
    return encoder.finish(tool, value, ctx.revision, selection)


async def _guarded(ctx: Context, what: str, call: Awaitable[Any]) -> Any:
    """Untyped failures in resources and prompts are internal errors; detail to the log."""
    try:
        return await call
    except McpError:
        raise
    except DependencyFailed as failed:
        log.warning("%s: %s", what, failed, exc_info=failed.__cause__)
        raise InternalError() from None
    except TimedOut as exc:
        log.warning("%s did not finish within %g s", what, exc.seconds)
        raise McpError(f"The {what} did not finish within {exc.seconds:g} s") from None
    except Exception as exc:
        log.exception("%s failed", what)
        raise caused_by(InternalError(), exc) from exc


async def resources_list(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    return await _listing(served, ctx, params, "resources", "resources")


async def resources_templates_list(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    return await _listing(served, ctx, params, "resourceTemplates", "templates")


async def resources_read(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    uri: str = params["uri"]
    # Hidden resources and templates are passed over, as if never registered.
    hide = served.hide_unauthorized and ctx.scopes is not None
    view = await view_of(served, ctx) if served.registry.visibility.active else None
    hides = None if view is None else view.hides
    found = served.registry.find_resource(uri, ctx.scopes if hide else None, hides)
    if found is None:
        raise ResourceNotFound(uri)
    run, arguments, mime, scopes, cache = found
    ctx.require_scopes(scopes)
    value = await _guarded(ctx, f"resource {uri}", run(ctx, arguments))
    if isinstance(value, InputRequired):
        return value
    if value is None:
        raise ResourceNotFound(uri)
    try:
        result: dict[str, Any] = {"contents": read_contents(uri, mime, value)}
        if cache is not None:  # the resource's own hint, before the server's
            result["ttlMs"], result["cacheScope"] = cache.ttl_ms, cache.scope
        return result
    except (TypeError, ValueError) as exc:
        log.error("resource %s returned %r: %s", uri, type(value).__name__, exc)
        raise caused_by(InternalError(), exc) from exc


async def prompts_list(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    return await _listing(served, ctx, params, "prompts", "prompts")


async def prompts_get(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    prompt = served.registry.prompts.get(params["name"])
    view = await view_of(served, ctx) if served.registry.visibility.active else None
    if (
        prompt is None
        or is_hidden(served, ctx, prompt.scopes)
        or (view is not None and view.hides("prompts", prompt.name))
    ):
        raise InvalidParams(f"Unknown prompt: {params['name']}")
    ctx.require_scopes(prompt.scopes)
    arguments = prompt.check_arguments(params.get("arguments") or {})
    value = await _guarded(ctx, f"prompt {prompt.name}", prompt.invoker(ctx, arguments))
    if isinstance(value, InputRequired):
        return value
    try:
        return prompt_messages(value)
    except TypeError as exc:
        log.error("prompt %s returned an invalid message: %s", prompt.name, exc)
        raise caused_by(InternalError(), exc) from exc


async def completion_complete(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    ref = params["ref"]
    key = ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")
    scopes = served.registry.completed_scopes(ref.get("type"), key)
    concealed = is_hidden(served, ctx, scopes)
    view = await view_of(served, ctx) if served.registry.visibility.active else None
    if view is not None and isinstance(key, str):
        concealed = concealed or view.hides(
            "prompts" if ref.get("type") == "ref/prompt" else "templates", key
        )
    if ref.get("type") == "ref/prompt" and (key not in served.registry.prompts or concealed):
        raise InvalidParams(f"Unknown prompt: {key}")
    # A hidden template completes nothing, as a template that does not exist.
    provider = None if concealed else served.registry.completions.get((ref.get("type"), key))
    if not concealed:
        ctx.require_scopes(scopes)
    values: list[str] = []
    if provider is not None:
        argument = params["argument"]
        context: Mapping[str, Any] = (params.get("context") or {}).get("arguments") or {}
        found = await _guarded(
            ctx,
            "completion",
            provider(
                ctx, {"argument": argument["name"], "value": argument["value"], "context": context}
            ),
        )
        values = [str(v) for v in found or []]
    return {
        "completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}
    }


async def subscriptions_listen(served: ServerOffering, ctx: Context, params: Params) -> Outcome:
    """Open a listen stream; the transport keeps it open and closes it with the server."""
    wanted = params["notifications"]
    offered = capabilities(served)
    honoured: dict[str, Any] = {}
    for key, capability in (
        ("toolsListChanged", "tools"),
        ("promptsListChanged", "prompts"),
        ("resourcesListChanged", "resources"),
    ):
        if wanted.get(key) is True and offered.get(capability, {}).get("listChanged"):
            honoured[key] = True
    for member in served.listening:  # the extensions' members (the tasks' taskIds)
        value = wanted.get(member.key)
        if value is not None:
            kept = member.honour(ctx, value)
            if kept is not None:
                honoured[member.key] = kept
    uris = check_resource_subscriptions(wanted.get("resourceSubscriptions"))
    if uris and offered.get("resources", {}).get("subscribe"):
        honoured["resourceSubscriptions"] = uris
    assert ctx.request_id is not None  # a listen is a request: the core never calls this otherwise
    revision = ctx.revision
    defined = (
        None
        if revision is None
        else revision.server_notifications | REVISIONS.extension_notifications
    )
    return served.subscriptions.open(ctx.request_id, honoured, ctx.emit, defined)


HANDLERS: Mapping[str, MethodHandler] = {
    "server/discover": discover,
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/templates/list": resources_templates_list,
    "resources/read": resources_read,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
    "completion/complete": completion_complete,
    "subscriptions/listen": subscriptions_listen,
}
