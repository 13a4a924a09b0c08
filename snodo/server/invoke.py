"""Calling application functions: sync or async, with the Context injected by type.

A handler names the Context by annotating a parameter with ``Context``; a parameter
annotated ``Depends(...)`` is provided (``snodo.server.dependencies``), one annotated
``Ask(...)`` is the user's answer (``snodo.server.asks``), and every other parameter is
an argument from the request. Nothing else is added to the arguments. A
sync function runs in the server's threads (``snodo.server.threads``) unless it was
registered ``inline``; with a ``timeout``, a call that takes longer raises ``TimedOut``.
"""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from snodo.core.context import Context, names_context
from snodo.core.result import InputRequired
from snodo.server.asks import (
    Answered,
    Question,
    answer_questions,
    ask_of,
    carried_forward,
    question,
)
from snodo.server.dependencies import Call, Provider, dependency_of, provider, resolve
from snodo.server.threads import Threads, threaded

UserFunction = Callable[..., Any]
"""What an author registers: a tool's, prompt's or resource's own function, sync or async,
whose signature the server reads once (not the core's ``MethodHandler``, which answers a
whole method, nor the client's ``InputHandler``, which answers a server's question)."""

PLAIN = frozenset({str, dict, list, int, float, bool, type(None), InputRequired})
"""Result types that are never awaitable, so need no ``inspect.isawaitable`` (an ABC
check, the dearest step of a sync call)."""


class FailedCall(dict[str, Any]):
    """A tool's ``isError`` result made from an exception its function raised, with the
    exception: what a middleware that retries or maps failures reads (``exception``);
    on the wire it is the plain result."""

    __slots__ = ("exception",)

    def __init__(self, result: dict[str, Any], exception: BaseException) -> None:
        super().__init__(result)
        self.exception = exception


class TimedOut(Exception):
    """A handler did not finish within its ``timeout``: awaited no longer (an async one
    is cancelled, a thread's result is dropped)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"did not finish within {seconds:g} s")


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    annotation: Any
    default: Any
    """``inspect.Parameter.empty`` when the parameter is required."""


@dataclass(frozen=True, slots=True)
class Invoker:
    function: UserFunction
    is_async: bool
    context_param: str | None
    parameters: tuple[Parameter, ...]
    accepts_any: bool
    """The function takes ``**kwargs``: every argument is passed through."""
    threads: Threads | None = None
    """Where a sync function runs; None: on the loop (``inline``)."""
    timeout: float | None = None
    """Seconds a call may take before ``TimedOut``; None: no limit."""
    dependencies: tuple[tuple[str, Provider], ...] = ()
    """Parameters a ``Depends`` provides, by name (``snodo.server.dependencies``)."""
    questions: tuple[Question, ...] = ()
    """Parameters the user answers (``snodo.server.asks``)."""
    direct: bool = False
    """Nothing to do around the call (no questions, dependencies, thread or timeout): a
    caller may call ``function`` itself, with the context at ``context_param``."""

    async def __call__(self, ctx: Context, arguments: Mapping[str, Any]) -> Any:
        result = self.start(ctx, arguments)
        if self.awaits(result):
            return await typing.cast(Awaitable[Any], result)
        return result

    def start(self, ctx: Context, arguments: Mapping[str, Any]) -> Any:
        """The function called: its value, or what to await for it (see ``awaits``).
        The hot path uses the two halves, so an inline sync tool runs with no coroutine."""
        if self.questions:
            found = answer_questions(self.questions, ctx, arguments)
            if isinstance(found, InputRequired):
                return found  # nothing runs until every question is answered
            return self._answered(ctx, found, arguments)
        return self._started(ctx, arguments)

    def _started(self, ctx: Context, arguments: Mapping[str, Any]) -> Any:
        if self.dependencies:
            result: Any = self._with_dependencies(ctx, arguments)
        else:
            result = self._call(ctx, dict(arguments))
        if self.timeout is not None and self.awaits(result):
            return _bounded(result, self.timeout)
        return result

    def _call(self, ctx: Context, kwargs: dict[str, Any]) -> Any:
        if self.threads is not None and not self.is_async:
            if self.context_param is not None:
                kwargs[self.context_param] = threaded(ctx)
            return _in_thread(self.threads, self.function, kwargs)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        return self.function(**kwargs)

    async def _with_dependencies(self, ctx: Context, arguments: Mapping[str, Any]) -> Any:
        """Provide the dependencies, call the function with them, then close them (their
        code after ``yield``) however the call ended."""
        async with AsyncExitStack() as stack:
            threaded_ctx = ctx if self.threads is None else threaded(ctx)
            call = Call(ctx, threaded_ctx, stack, self._run_sync, {})
            kwargs = {**arguments, **await resolve(self.dependencies, call)}
            result = self._call(ctx, kwargs)
            if self.awaits(result):
                result = await result
            return result

    async def _answered(self, ctx: Context, done: Answered, arguments: Mapping[str, Any]) -> Any:
        """The handler called with its questions' answers; if it asks more itself, the
        answers travel on in the state beside its own."""
        result = self._started(done.ctx, {**arguments, **done.values})
        if self.awaits(result):
            result = await result
        if isinstance(result, InputRequired):
            return carried_forward(ctx, done, result)
        return result

    async def _run_sync(self, call: Callable[[], Any], inline: bool) -> Any:
        if inline or self.threads is None:
            return call()
        return await self.threads.run(call, {})

    def awaits(self, result: Any) -> bool:
        """Whether ``start``'s result is still to be awaited."""
        return type(result) not in PLAIN and (self.is_async or inspect.isawaitable(result))


async def _in_thread(threads: Threads, function: UserFunction, kwargs: dict[str, Any]) -> Any:
    value = await threads.run(function, kwargs)
    if type(value) not in PLAIN and inspect.isawaitable(value):
        value = await value  # a sync function that handed back something to await
    return value


async def _bounded(call: Awaitable[Any], seconds: float) -> Any:
    timer = asyncio.timeout(seconds)
    try:
        async with timer:
            return await call
    except TimeoutError:
        if timer.expired():
            raise TimedOut(seconds) from None
        raise  # the handler's own


def can_ask(run: Invoker) -> bool:
    """Whether the handler can answer ``input_required``, as far as can be known without
    running it: it has ``Ask`` parameters, or its return annotation names
    ``InputRequired`` (a handler that returns one unannotated cannot be told apart)."""
    if run.questions:
        return True
    returns = inspect.signature(run.function).return_annotation
    if isinstance(returns, str):  # postponed annotations, as written
        return "InputRequired" in returns
    return returns is InputRequired or InputRequired in typing.get_args(returns)


class DefinitionError(TypeError, ValueError):
    """A handler (or a server's lifespan) that cannot be served as written: an ``Ask``
    parameter the user may decline but not ``| None``, a ``Depends`` on a parameter
    nothing provides. The message names the handler and the fix on one line, which
    ``snodo run`` prints instead of a traceback; a TypeError and a ValueError both, as
    the checks it wraps raised."""


def invoker(
    function: UserFunction,
    *,
    inline: bool = False,
    timeout: float | None = None,
    threads: Threads | None = None,
) -> Invoker:
    """How to call ``function``: a sync one in ``threads`` unless ``inline`` (or no
    threads are given), within ``timeout`` seconds when given. ``DefinitionError``,
    naming the function, when its parameters cannot be served."""
    try:
        return _invoker(function, inline, timeout, threads)
    except DefinitionError:
        raise
    except (TypeError, ValueError) as exc:
        name = getattr(function, "__qualname__", None) or repr(function)
        raise DefinitionError(f"{name}: {exc}") from exc


def _invoker(
    function: UserFunction, inline: bool, timeout: float | None, threads: Threads | None
) -> Invoker:
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError("timeout must be a positive number of seconds")
    signature = inspect.signature(function)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError):
        hints = {}
    context_param = None
    parameters = []
    dependencies: list[tuple[str, Provider]] = []
    questions: list[Question] = []
    accepts_any = False
    for name, param in signature.parameters.items():
        annotation = hints.get(name, param.annotation)
        depends = dependency_of(annotation)
        ask = ask_of(annotation)
        if depends is not None:
            dependencies.append((name, provider(depends)))
        elif ask is not None:
            questions.append(question(name, annotation, ask))
        elif param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_any = True
        elif param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        elif names_context(annotation):
            context_param = name
        else:
            parameters.append(Parameter(name, annotation, param.default))
    is_async = inspect.iscoroutinefunction(function)
    return Invoker(
        function=function,
        is_async=is_async,
        context_param=context_param,
        parameters=tuple(parameters),
        accepts_any=accepts_any,
        threads=None if inline else threads,
        timeout=timeout,
        dependencies=tuple(dependencies),
        questions=_unique(questions),
        direct=not (dependencies or questions or timeout is not None)
        and (inline or threads is None or is_async),
    )


def _unique(questions: list[Question]) -> tuple[Question, ...]:
    keys = [q.key for q in questions]
    for key in keys:
        if keys.count(key) > 1:
            raise ValueError(f"two asked parameters use the input request key {key!r}")
    return tuple(questions)


def described(
    definition: dict[str, Any], function: UserFunction, title: str | None, description: str | None
) -> dict[str, Any]:
    """Add ``title`` and ``description`` (else the docstring's first paragraph) when set."""
    if title is not None:
        definition["title"] = title
    description = description or first_paragraph(function)
    if description:
        definition["description"] = description
    return definition


def listed_fields(
    icons: list[Mapping[str, Any]] | None = None,
    annotations: Mapping[str, Any] | None = None,
    size: int | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The optional fields a listed item carries, by their wire names, when given."""
    fields: dict[str, Any] = {}
    if icons:
        fields["icons"] = [dict(icon) for icon in icons]
    if annotations:
        fields["annotations"] = dict(annotations)
    if size is not None:
        fields["size"] = size
    if meta:
        fields["_meta"] = dict(meta)
    return fields


def first_paragraph(function: UserFunction) -> str | None:
    doc = inspect.getdoc(function)
    if not doc:
        return None
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip() or None
