"""The shapes the core shares with what is layered on it, named once.

A server hands the core two things: a method table (``MethodHandler`` by method name)
and an ``Offering`` (what it serves, for which versions, with which extension methods).
The core hands each handler the offering back, untouched, with the request's
``Context`` and params; what a handler answers is an ``Outcome``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from snodo.core.context import Context, Emit
from snodo.core.result import InputRequired

if TYPE_CHECKING:
    from snodo.revisions import Revision

__all__ = [
    "AnswerCheck",
    "CallNext",
    "Emit",
    "ExtensionMethod",
    "MethodHandler",
    "Middleware",
    "Offering",
    "OpenStream",
    "Outcome",
    "Params",
]

Params = Mapping[str, Any]
"""A request's params, already checked against its revision's model, read as JSON."""


class OpenStream:
    """A stream a handler leaves open (``subscriptions/listen``): the transport keeps it
    open until the peer goes or the server ends it."""

    __slots__ = ()

    ended: asyncio.Event
    """Set when the server ended the stream itself: the transport closes it."""

    def end(self) -> None:
        """End the stream gracefully, with the request's final answer."""
        raise NotImplementedError


Outcome = dict[str, Any] | InputRequired | OpenStream
"""What a method handler answers: a result without ``resultType`` (the core adds it,
the caching hints and ``_meta``), the questions of an ``InputRequired``, or a stream."""

MethodHandler = Callable[[Any, Context, Params], Awaitable[Outcome]]
"""``handler(offering, ctx, params)``: answers one method of the table."""

CallNext = Callable[[Context], Awaitable[Any]]
"""What a middleware calls to go on: the next middleware, or the handler."""

Middleware = Callable[[Context, CallNext], Awaitable[Any]]
"""``async def mw(ctx, call_next)``: runs around every handler, on every retry too.

It may inspect the context, put things in ``ctx.state``, call ``call_next`` (with the
same context, or one whose ``state`` it replaced) and change what comes back. It cannot
change what the framework checks: the handler and admission see the framework-owned
fields of the original request whatever context is passed on.
"""


class ExtensionMethod(Protocol):
    """A method outside the revision's table (an extension's, or a core method a server
    adds with ``server.method``): its own params model and handler in one."""

    @property
    def core(self) -> bool:
        """A method a core revision defines: answered only where the revision has it."""
        ...

    @property
    def params(self) -> Any:
        """The model the params are checked with before the handler runs."""
        ...

    @property
    def input_required(self) -> bool: ...

    @property
    def cacheable(self) -> bool: ...

    async def __call__(self, offering: Any, ctx: Context, params: Params) -> Any: ...


class AnswerCheck(Protocol):
    """What checks a server's answers against the request's revision when it asks to
    (``Spec(check_answers=True)``; ``snodo.server.answer_checks``): it tells, it never
    changes an answer."""

    def reply(self, revision: Revision | None, method: str, response: Any) -> None:
        """Check one response to ``method`` (None: no response) of ``revision``."""
        ...

    def watch(self, revision: Revision, emit: Emit, method: str = "") -> Emit:
        """``emit``, checking each message of the request to ``method`` it is given."""
        ...


class Offering(Protocol):
    """What a server offers, as the core reads it on every request."""

    @property
    def supported_versions(self) -> tuple[str, ...]:
        """The modern protocol versions served, newest first."""
        ...

    @property
    def revisions(self) -> dict[str, Revision]:
        """The revision of each served version: its rules and models."""
        ...

    @property
    def tables(self) -> dict[str, tuple[dict[str, Any], Revision]]:
        """Each version's method table and revision: the request path's one lookup."""
        ...

    @property
    def methods(self) -> Mapping[str, MethodHandler]:
        """The handler of each core method the server answers."""
        ...

    @property
    def extension_methods(self) -> Mapping[str, ExtensionMethod]:
        """Methods beyond the revision's table, by name."""
        ...

    def offers(self, method: str) -> bool:
        """Whether the feature a core method belongs to is on offer."""
        ...
