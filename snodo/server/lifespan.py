"""What a server opens once per worker process and closes when it stops: its lifespans.

``Server(lifespan=fn)``: ``fn(server)`` is an async context manager (an
``@asynccontextmanager`` function, say) that opens what the handlers share (a database
pool, an HTTP client) and yields it; handlers read it as ``ctx.lifespan``, or by type
with ``ctx.lifespan_as(Pool)``. Several compose: ``lifespan=[a, b]`` enters ``a`` then
``b`` and leaves them in the reverse order, and ``ctx.lifespan`` is then the tuple of
what they yielded. The transports enter them before the first request (the ASGI
lifespan, around the stdio loop, around a ``MemoryTransport`` client's session) and
leave them when serving ends; under ``snodo run --workers N`` each worker does.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

from snodo.server.invoke import DefinitionError

__all__ = ["Lifespan", "Lifespans", "StartupFailed", "describe"]

Lifespan = Callable[[Any], AbstractAsyncContextManager[Any]]
"""``fn(server)``: an async context manager whose value the handlers share."""


class Lifespans:
    """A server's lifespans, entered and left as one."""

    __slots__ = ("_given", "_stack", "value")

    def __init__(self, given: Lifespan | Sequence[Lifespan] | None) -> None:
        if given is None:
            given = ()
        elif callable(given):
            given = (given,)
        for one in given:
            _check(one)
        self._given: tuple[Lifespan, ...] = tuple(given)
        self._stack: AsyncExitStack | None = None
        self.value: Any = None
        """What the lifespans yielded: one's value, a tuple of several's, None before."""

    def add(self, fn: Lifespan) -> None:
        """One more, entered after the others (a server's mounts add theirs)."""
        if self._stack is not None:
            raise RuntimeError("the server has started: a lifespan cannot be added now")
        _check(fn)
        self._given = (*self._given, fn)

    @property
    def entered(self) -> bool:
        """Whether they are open now."""
        return self._stack is not None

    async def enter(self, server: Any) -> None:
        """Enter each in order; one that fails leaves those already entered, and raises."""
        if self._stack is not None or not self._given:
            return
        stack = AsyncExitStack()
        try:
            values = [await stack.enter_async_context(fn(server)) for fn in self._given]
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        self.value = values[0] if len(values) == 1 else tuple(values)

    async def leave(self) -> None:
        """Leave them in the reverse order (nothing if they were not entered)."""
        stack, self._stack = self._stack, None
        self.value = None
        if stack is not None:
            await stack.aclose()


class StartupFailed(Exception):
    """A lifespan raised while the server started: it serves nothing."""


def describe(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _check(fn: Any) -> None:
    """A lifespan must make an async context manager: a bare generator function (the
    decorator forgotten) fails only at startup otherwise, with a protocol error."""
    if not callable(fn):
        raise TypeError("lifespan must be a callable fn(server), or a list of them")
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        kind = "an async generator" if inspect.isasyncgenfunction(fn) else "a generator"
        name = getattr(fn, "__qualname__", repr(fn))
        raise DefinitionError(
            f"lifespan {name} is {kind} function: write it as `async def` and decorate it"
            " with @contextlib.asynccontextmanager"
        )
