"""Dependencies: a handler parameter whose value a function provides, not the caller.

``db: Annotated[Db, Depends(get_db)]`` gives the handler what ``get_db`` returns. The
provider may be sync or async, a function or a generator (sync or async) whose code
after ``yield`` runs once the handler has finished, failed or been cancelled. It may
take the request's ``Context`` (a parameter annotated ``Context``) and other
dependencies the same way, and nothing else: its parameters are checked when the handler
is registered. Within one call each provider runs once, however many parameters ask for
it. Dependencies are not arguments, so they are not in the tool's ``inputSchema``.

A sync provider runs in the server's threads like a sync handler (``inline=True`` keeps
it on the loop). One that raises ``snodo.ToolError`` (``raise tool_error(...)``) ends a
tool call as that ``isError`` result, and a protocol error (``McpError``) is that error;
any other exception is an internal error (-32603), its traceback logged at WARNING and
never sent to the client.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from snodo.core.context import Context, names_context
from snodo.core.errors import McpError
from snodo.core.result import ToolError

__all__ = [
    "Call",
    "DependencyFailed",
    "Depends",
    "Provider",
    "dependency_of",
    "provider",
    "resolve",
]


@dataclass(frozen=True, slots=True)
class Depends:
    """``Annotated[T, Depends(fn)]``: the parameter's value is what ``fn`` provides."""

    function: Callable[..., Any]
    inline: bool = False
    """Run a sync ``function`` on the event loop rather than in a thread."""

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise TypeError("Depends takes the function that provides the value")


class DependencyFailed(Exception):
    """A dependency raised something other than a ``ToolError`` or protocol error: the
    server's fault, an internal error to the client (the cause is logged)."""

    def __init__(self, provider: Provider) -> None:
        self.name = getattr(provider.function, "__name__", repr(provider.function))
        super().__init__(f"dependency {self.name} failed")


@dataclass(frozen=True, slots=True)
class Provider:
    """A dependency's function, with what it asks for checked once."""

    function: Callable[..., Any]
    inline: bool
    context_param: str | None
    needs: tuple[tuple[str, Provider], ...]
    kind: str
    """``"async"``, ``"sync"``, ``"async generator"`` or ``"generator"``."""


def dependency_of(annotation: Any) -> Depends | None:
    """The ``Depends`` in an ``Annotated`` annotation, if there is one."""
    for extra in getattr(annotation, "__metadata__", ()):
        if isinstance(extra, Depends):
            return extra
    return None


def provider(depends: Depends, seen: tuple[Callable[..., Any], ...] = ()) -> Provider:
    """``depends`` checked: what it asks for, recursively; TypeError for a parameter that
    is neither the Context nor a dependency, or a dependency that needs itself."""
    function = depends.function
    name = getattr(function, "__name__", repr(function))
    if function in seen:
        raise TypeError(f"dependency {name} depends on itself")
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError):
        hints = {}
    context_param = None
    needs = []
    for param_name, param in inspect.signature(function).parameters.items():
        annotation = hints.get(param_name, param.annotation)
        inner = dependency_of(annotation)
        if inner is not None:
            needs.append((param_name, provider(inner, (*seen, function))))
        elif names_context(annotation):
            context_param = param_name
        elif param.default is inspect.Parameter.empty:
            raise TypeError(
                f"dependency {name}: parameter {param_name!r} is neither the Context nor"
                " a dependency: annotate it Annotated[T, Depends(fn)] or Context, or give"
                " it a default"
            )
    if inspect.isasyncgenfunction(function):
        kind = "async generator"
    elif inspect.isgeneratorfunction(function):
        kind = "generator"
    elif inspect.iscoroutinefunction(function):
        kind = "async"
    else:
        kind = "sync"
    return Provider(function, depends.inline, context_param, tuple(needs), kind)


RunSync = Callable[[Callable[..., Any], bool], Awaitable[Any]]
"""How the handler's invoker runs a sync call: in its threads, or inline when asked."""


@dataclass(slots=True)
class Call:
    """One call's dependencies: the contexts to hand them, what ran, what to close."""

    ctx: Context
    threaded_ctx: Context
    """The same request, for a provider in a thread (what it emits goes to the loop)."""
    stack: AsyncExitStack
    run_sync: RunSync
    done: dict[Callable[..., Any], Any]


async def resolve(wanted: tuple[tuple[str, Provider], ...], call: Call) -> dict[str, Any]:
    """The values of ``wanted`` by parameter name, each provider run once per call;
    generators' ends pushed onto the call's stack."""
    values = {}
    for name, chosen in wanted:
        if chosen.function not in call.done:
            try:
                call.done[chosen.function] = await _provide(chosen, call)
            except (ToolError, McpError, DependencyFailed):
                raise  # an answer on purpose, or a failure already named
            except Exception as exc:
                raise DependencyFailed(chosen) from exc
        values[name] = call.done[chosen.function]
    return values


async def _provide(chosen: Provider, call: Call) -> Any:
    kwargs = await resolve(chosen.needs, call)
    in_thread = chosen.kind in ("sync", "generator") and not chosen.inline
    if chosen.context_param is not None:
        kwargs[chosen.context_param] = call.threaded_ctx if in_thread else call.ctx
    if chosen.kind == "async":
        return await chosen.function(**kwargs)
    if chosen.kind == "sync":
        return await call.run_sync(functools.partial(chosen.function, **kwargs), chosen.inline)
    if chosen.kind == "async generator":
        agen = chosen.function(**kwargs)
        value = await agen.__anext__()
        call.stack.push_async_callback(_finish_async, agen)
        return value
    gen = chosen.function(**kwargs)  # a generator: nothing runs until next()
    value = await call.run_sync(functools.partial(next, gen), chosen.inline)
    call.stack.push_async_callback(_finish_sync, gen, call.run_sync, chosen.inline)
    return value


async def _finish_async(agen: Any) -> None:
    """Run an async generator dependency's code after its ``yield``."""
    try:
        await agen.__anext__()
    except StopAsyncIteration:
        return
    await agen.aclose()
    raise RuntimeError("a dependency generator must yield once")


async def _finish_sync(gen: Any, run_sync: RunSync, inline: bool) -> None:
    """Run a generator dependency's code after its ``yield`` (in a thread, unless inline)."""

    def finish() -> None:
        try:
            next(gen)
        except StopIteration:
            return
        gen.close()
        raise RuntimeError("a dependency generator must yield once")

    await run_sync(finish, inline)
