"""Extensions: what a server offers beyond the core protocol, by identifier, and the
hooks through which an extension changes what the server does.

``Extension(id, settings)`` is advertised in the ``extensions`` of the server's
capabilities (``server/discover``, and a legacy session's ``initialize`` answer) with its
settings. Its methods (``@ext.method("ns/name", params=Model)``) are requests the core
does not know: the server routes them to the handler, in both eras, after the same
checks as any request (``_meta``, version, state), with their params checked by
``Model`` (the ``_meta`` member aside): -32602 for params that do not fit, -32601 still
for a method nobody registered. A handler takes the request's ``Context`` and the
validated params, sync or async, and returns its result (a model or a dict).
``ext.notify(ctx, "ns/event", params)`` sends one of the extension's notifications on
the request's stream. ``ctx.client_supports(id)`` says whether the request's client
declared an extension (``Client(extensions={id: settings})`` does). An extension made
with ``legacy=False`` is advertised to legacy sessions but its methods are only for
modern requests.

``Server(extensions=[...])`` or ``server.add_extension(ext)`` offers one; the server
calls ``ext.install(server)`` once, which declares it, routes its methods and plugs in
its hooks. An extension that offers more (tools, resources) overrides ``install`` and
calls the base one. The hooks, each absent unless the extension sets it:

* ``visibility`` (``VisibilityHook``): which items a caller sees, a rule among the
  server's own (``snodo.server.visibility``, through ``Visibility.add_hook``). An item
  hidden from a caller is left out of its lists and answers every request exactly as an
  item that does not exist; a list that the rule may change by caller is marked
  ``private``.
* ``calls`` (``ToolCalls``): around each tool's handler; ``before`` may refuse a call
  (it raises), ``after`` may turn what the handler returned into the call's answer
  (``Answered``), as the tasks extension turns background work into a task. What a
  handler returns for an extension to take subclasses ``Handoff``
  (``snodo.server.handoff``): no output schema is made of it, and one no extension
  took is the server's internal error.
* ``listening`` (``Listening``): a member of ``subscriptions/listen``'s
  ``notifications`` the extension honours (the tasks extension's ``taskIds``).
* ``observe(observer)``: told the server's observer, when it is set.
* ``dependencies()``: what the server's readiness pings for the extension (Redis URLs
  by the name of what each serves).

``install`` reads the server's Redis URL as ``server.redis`` (``Server(redis=)``, else
``SNODO_REDIS``): an extension keeps there what it was given no store for, as the
server's own stores do.

The extensions snodo ships (MCP Apps, Skills, Tasks) are built on this API alone, in
``snodo.extensions``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.core.observe import Observer
from snodo.core.types import Outcome
from snodo.revisions import REVISIONS
from snodo.server.handoff import Handoff
from snodo.server.registry import Registry
from snodo.server.visibility import Kind

__all__ = [
    "Answered",
    "Extension",
    "ExtensionMethod",
    "Handoff",
    "Hooks",
    "Host",
    "Kind",
    "Listening",
    "ToolCalls",
    "VisibilityHook",
]


F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger("snodo")


class _Params(BaseModel):
    """Params a custom method's model checks: any object, the ``_meta`` member aside."""


@dataclass(frozen=True, slots=True)
class ExtensionMethod:
    """One request of an extension: its params model and handler."""

    method: str
    model: type[BaseModel] | None
    """Checks the params for the handler, which gets the model; None: the handler
    gets the params as they came (``params`` alone checked them)."""
    handler: Callable[..., Any]
    params: type[BaseModel] = _Params
    """What the core checks the params with before the model (any object)."""
    input_required: bool = False
    cacheable: bool = False
    core: bool = False
    """A method a core revision defines, served with ``server.method``: answered only
    to requests whose revision defines it, with that revision's params model."""
    """Whether the result carries caching hints (a core method the revision marks so)."""

    async def __call__(self, served: Any, ctx: Context, params: Mapping[str, Any]) -> Any:
        checked: Any = params
        if self.model is not None:
            given = {key: value for key, value in params.items() if key != "_meta"}
            try:
                checked = self.model.model_validate(given)
            except ValidationError as exc:
                first = exc.errors(include_input=False, include_url=False)[0]
                where = ".".join(str(step) for step in first["loc"]) or "params"
                raise InvalidParams(f"Invalid params: {where}: {first['msg']}") from None
        value = self.handler(ctx, checked)
        if inspect.isawaitable(value):
            value = await value
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        if not isinstance(value, dict):
            raise TypeError(f"{self.method} must return a model or a dict, not {type(value)}")
        return value


class VisibilityHook(Protocol):
    """Which items a caller sees (an extension's ``visibility``), added to the server's
    ``Visibility`` as a hook of its own.

    Listing, ``tools/call``, ``prompts/get``, ``resources/read`` and
    ``completion/complete`` ask it of every item they would show or use: an item it
    ``hides`` is left out of the caller's lists and answers as one that does not exist,
    so what a caller cannot see it cannot find by asking for it either.
    """

    def caller_dependent(self, kind: Kind) -> bool:
        """Whether the rule may now hide an item of ``kind`` from some callers and not
        others: the lists of ``kind`` are then each caller's own (``private``)."""
        ...

    def hides(self, ctx: Context, kind: Kind, key: str) -> bool:
        """Whether the item ``key`` of ``kind`` (a tool's or prompt's name, a
        resource's URI, a template's URI template) is hidden from the caller of
        ``ctx``."""
        ...


@dataclass(frozen=True, slots=True)
class Answered:
    """What ``ToolCalls.after`` returns for a call it answered itself: ``outcome`` is
    the call's answer as it stands (a task's creation, say), not a tool's value."""

    outcome: Outcome


class ToolCalls(Protocol):
    """Around each tool's handler (an extension's ``calls``)."""

    def before(self, tool: Any, ctx: Context) -> None:
        """Before the arguments are checked: raise an ``McpError`` to refuse the call."""
        ...

    async def after(
        self, tool: Any, ctx: Context, value: Any, finish: Callable[[Any], dict[str, Any]]
    ) -> Any:
        """What the handler returned, as the call goes on: the value itself, another
        value for the tool's result, or ``Answered(outcome)`` for the call's answer.
        ``finish(value)`` makes the call's result of a value as the request's revision
        shapes it (its outputs asked for): what a task's result is made with."""
        ...


class Listening(Protocol):
    """A member of ``subscriptions/listen``'s ``notifications`` an extension honours."""

    key: str
    """The member's name (``taskIds``)."""

    def honour(self, ctx: Context, value: Any) -> Any:
        """What of ``value`` the stream honours (the subscription keeps it under
        ``key``); None honours nothing. Raise an ``McpError`` to refuse the listen."""
        ...


class Hooks(Protocol):
    """Where an extension's hooks plug in: the server's ``ServerOffering``, which the
    method handlers read."""

    calls: tuple[ToolCalls, ...]
    listening: tuple[Listening, ...]
    mask_errors: bool
    subscriptions: Any


class Host(Protocol):
    """What ``Extension.install`` reaches of the ``Server`` it is offered at."""

    @property
    def registry(self) -> Registry:
        """What is registered: the extension's declaration and methods go there."""
        ...

    @property
    def offering(self) -> Hooks:
        """What the method handlers read: the extension's hooks go there."""
        ...

    @property
    def redis(self) -> str | None:
        """The Redis URL the server's stores left at their defaults share (None: none):
        an extension given no store of its own keeps its state there."""
        ...


class Extension:
    """An extension a server offers: its identifier, settings, methods, notifications,
    and the hooks it plugs into the server (``install``)."""

    visibility: VisibilityHook | None = None
    """Which items each caller sees; None: this extension hides nothing."""
    calls: ToolCalls | None = None
    """Around each tool's handler; None: this extension leaves calls alone."""
    listening: Listening | None = None
    """A listen member it honours; None: none."""

    def __init__(
        self,
        extension_id: str,
        settings: Mapping[str, Any] | None = None,
        *,
        legacy: bool = True,
    ) -> None:
        if "/" not in extension_id:
            raise ValueError(
                f"an extension identifier looks like vendor.example/name: {extension_id!r}"
            )
        self.id = extension_id
        self.settings = dict(settings or {})
        self.methods: dict[str, ExtensionMethod] = {}
        self.legacy = legacy
        """Whether legacy sessions may call its methods (it is advertised to them anyway)."""

    def install(self, server: Host) -> None:
        """Offer the extension at ``server`` (``Server.add_extension`` calls this once):
        declared in its capabilities, its methods routed, its hooks plugged in."""
        registry = server.registry
        registry.extensions[self.id] = self.settings
        registry.extension_methods.update(self.methods)
        if not self.legacy:
            registry.modern_methods.update(self.methods)
        if self.visibility is not None:
            rule = self.visibility
            registry.visibility.add_hook(rule.hides, rule.caller_dependent)
        offering = server.offering
        if self.calls is not None:
            offering.calls = (*offering.calls, self.calls)
        if self.listening is not None:
            offering.listening = (*offering.listening, self.listening)

    def observe(self, observer: Observer) -> None:
        """Told the server's observer (``Server(observer=...)``), whenever it is set."""

    def dependencies(self) -> dict[str, str]:
        """The Redis URLs the extension keeps its state at, by the name of what each
        serves: the server's readiness pings them."""
        return {}

    def method(
        self, name: str, *, params: type[BaseModel], proposal: str | None = None
    ) -> Callable[[F], F]:
        """``@ext.method("ns/name", params=Model)``: the handler of a request the
        extension adds, ``handler(ctx, params) -> result``.

        Its namespace is its own: none a pinned core revision defines a method or
        notification in (``tools``, ``notifications``, ...). A request a core revision
        adds is the core's, served with ``server.method(name)``. ``proposal`` names the
        specification proposal whose method an experimental extension serves in a core
        namespace (``tools/catalog`` of SEP-2636): allowed only while no pinned
        revision defines that method."""
        namespace = name.split("/", maxsplit=1)[0] if "/" in name else None
        if proposal is not None and namespace is not None:
            if any(name in revision.methods for revision in REVISIONS.all):
                raise ValueError(
                    f"{name!r} is a method of a pinned revision, not only of {proposal}"
                )
        elif namespace is None or namespace in REVISIONS.namespaces:
            core = f", not the core's {namespace}/" if namespace is not None else ""
            raise ValueError(
                f"an extension's method has a namespace of its own{core}: {name!r}"
                f" (a request a core revision defines or adds: server.method({name!r}))"
            )

        def register(handler: F) -> F:
            self.methods[name] = ExtensionMethod(name, params, handler)
            return handler

        return register

    @staticmethod
    def notify(ctx: Context, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification of the extension on the request's stream."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        ctx.emit(message)
