"""Extensions: what a server offers beyond the core protocol, by identifier.

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
declared an extension (``Client(extensions={id: settings})`` does).

MCP Apps (``snodo.server.apps``) is advertised through the same registry, and the tasks
extension is one too (``tasks_extension``): ``Server(tasks=Tasks(store))`` adds it, its
three methods routed to the engine with their params checked by the generated models.
An extension made with ``legacy=False`` is advertised to legacy sessions but its methods
are only for modern requests (the tasks extension's, whose names the legacy
revision gives other meanings).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from snodo.core.context import Context
from snodo.core.errors import InvalidParams
from snodo.revisions import REVISIONS
from snodo.revisions.tasks.protocol import EXTENSION_ID as TASKS_EXTENSION_ID
from snodo.tasks.engine import Tasks
from snodo.tasks.methods import TASK_METHODS

__all__ = ["Extension", "ExtensionMethod", "tasks_extension"]

F = TypeVar("F", bound=Callable[..., Any])


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


class Extension:
    """An extension a server offers: its identifier, settings, methods, notifications."""

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


def tasks_extension(engine: Tasks) -> Extension:
    """The tasks extension as the server offers it: ``tasks/get``, ``tasks/update`` and
    ``tasks/cancel`` answered by ``engine``, for modern requests only."""
    extension = Extension(TASKS_EXTENSION_ID, legacy=False)
    handlers = {
        "tasks/get": engine.get,
        "tasks/update": engine.update,
        "tasks/cancel": engine.cancel,
    }
    for method, spec in TASK_METHODS.items():
        extension.methods[method] = ExtensionMethod(
            method, None, handlers[method], params=spec.params, input_required=spec.input_required
        )
    return extension
