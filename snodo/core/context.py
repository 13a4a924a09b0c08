"""What a handler knows about the request it is answering.

A ``Context`` is built by the server for every request (and anew for every retry of
an MRTR flow). Its fields are owned by the framework: middleware may hand a handler a
context with other values, but the server's own checks (capability admission, state
binding) always read the original, and the handler receives the original's
framework-owned fields too. ``state`` is the one place for application data that
middleware wants a handler to see.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from snodo.core.capabilities import missing
from snodo.core.errors import InsufficientScope, InvalidParams

if TYPE_CHECKING:
    from snodo.revisions import Revision

ACCESS_TOKEN: ContextVar[Any] = ContextVar("snodo_access_token", default=None)
"""The access token the transport verified for the request its task answers, set before
the core runs and read by it into the handler's context (``Context.access_token``). A
variable of the task's context rather than an argument, so the legacy era's layers
carry it to the core unchanged; each ASGI request runs in a task of its own."""
TOKEN_EXCHANGE: ContextVar[Callable[..., Awaitable[Any]] | None] = ContextVar(
    "snodo_token_exchange", default=None
)
"""What trades the caller's token for another (``Context.exchange_token``): set by the
HTTP app for the request its task answers when the resource has a token exchange
(``snodo.auth``), read by the server into the handler's context. The core knows only
that it is an awaitable function."""

PEER_ADDRESS: ContextVar[str | None] = ContextVar("snodo_peer_address", default=None)
"""The network address of the client whose request the task answers, where the transport
knows it (HTTP, set for a server with middleware): what a rate limit by address counts."""

# RFC 5424 severities in ascending order (server/utilities/logging.mdx).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""The syslog severities MCP logging uses (server/utilities/logging.mdx), least first."""
LOG_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}
"""Each level's place in ``LOG_LEVELS``: a message goes out when its rank is at least the
rank of the level the client asked for."""

_T = TypeVar("_T")

Emit = Callable[[dict[str, Any]], None]
"""Receives each request-scoped notification (progress, log message) as it happens."""


def _drop(_: dict[str, Any]) -> None:
    return None


class UserState(Protocol):
    """A caller's own small key-value store, kept across requests by the server
    (``snodo.server.callers``): values are JSON, each key lives a while after its last
    write, and a caller holds a bounded number of keys, each of a bounded size."""

    async def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when there is none (or it expired)."""
        ...

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Keep ``value`` (JSON) under ``key`` for ``ttl`` seconds (else the server's)."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` (nothing when there is none)."""
        ...

    async def keys(self) -> list[str]:
        """The caller's keys now, sorted."""
        ...

    async def clear(self) -> None:
        """Forget every key of the caller."""
        ...


class CallerSpace(Protocol):
    """What a server lends each request for its caller's own things, which outlive the
    request and so are not the core's to keep."""

    def user_state(self, ctx: Context) -> UserState:
        """The caller's ``UserState``; an error when the request names no caller."""
        ...

    async def change_visibility(
        self,
        ctx: Context,
        enable: bool | None,
        names: Iterable[str],
        tags: Iterable[str],
        kinds: Iterable[str] | None,
    ) -> None:
        """Show (``enable``) or hide the caller's items of these names or tags from now
        on; ``enable`` None forgets the caller's changes. An error when the request
        names no caller."""
        ...


def _many(given: str | Iterable[str]) -> tuple[str, ...]:
    return (given,) if isinstance(given, str) else tuple(given)


class Sent:
    """What ``report_progress`` and ``log`` return: the notification is already on its
    way, so awaiting it (``await ctx.log(...)``, as in other SDKs) does nothing more and
    not awaiting it loses nothing."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return
        yield  # a generator that ends at once: ``await`` returns None

    def __repr__(self) -> str:
        return "Sent()"


SENT = Sent()
"""The one ``Sent`` every call returns."""


@dataclass(slots=True)
class Progress:
    """What ``report_progress`` last reported, so the next must be more."""

    last: float | None = None


# Not slotted: the server fills a fresh instance's dict in one step (snodo.core.request_path).
@dataclass(frozen=True)
class Context:
    """One request as a handler sees it: what the client sent, and what it may do back.

    The framework builds it after the request passed its checks (docs/request-checks.md)
    and hands the same one to middleware and handler; it is frozen, so what was checked
    is what the handler reads. ``input_responses`` and ``state_data`` carry the earlier
    rounds (read answers with each input module's ``response``), ``seal`` keeps data for
    the next round, ``supports`` tells what this request's client declared, and
    ``log``/``report_progress`` send request-scoped notifications. ``state`` is the one field
    middleware may change for the handler.
    """

    request_id: str | int | None
    request_method: str
    request_params: Mapping[str, Any]
    """The params exactly as received, ``_meta`` and retry fields included."""
    protocol_version: str
    client_capabilities: Mapping[str, Any]
    """The ClientCapabilities this request declared (an empty mapping declares none)."""
    client_info: Mapping[str, Any] | None = None
    log_level: str | None = None
    principal: str | None = None
    """Who is asking, from the transport's authentication; None is anonymous."""
    scopes: frozenset[str] | None = None
    """The scopes the caller's access token grants (implied scopes included), or None
    where the transport does no OAuth (stdio: the environment is the credential)."""
    access_token: Any = None
    """The caller's verified access token (a ``snodo.auth.AccessToken``: subject, client
    id, scopes as granted, expiry, every claim), where the transport checked one with
    OAuth; None on stdio, in memory and over HTTP without OAuth. Typed, through the
    ``snodo.server.access.Token`` dependency."""
    token_exchange: Callable[..., Awaitable[Any]] | None = field(default=None, repr=False)
    """What ``exchange_token`` asks, bound to the caller's token, where the HTTP app
    verified one and the resource has a token exchange; None otherwise."""
    progress_token: str | int | None = None
    input_responses: Mapping[str, Any] = field(default_factory=dict)
    """Answers to an earlier round's inputRequests, by key (raw JSON objects)."""
    checked_answers: Mapping[str, tuple[Any, Any]] | None = field(default=None, repr=False)
    """Answers the server already validated, by key: (the raw answer, its wire model).
    ``snodo.core.input_responses.read`` reuses the model while the raw answer is still the one in
    ``input_responses``, so an answer is validated once per request."""
    revision: Revision | None = field(default=None, repr=False)
    """The revision ``protocol_version`` names (``snodo.revisions``): what the input
    modules read this request's answers with. None, in a context built by hand or on a
    legacy session, reads them with the authoring revision's models."""
    request_state: str | None = None
    """The requestState echoed from an earlier round, if any."""
    state_data: Any = None
    """What the earlier round sealed, already verified, when the server holds state keys."""
    asked: Mapping[str, str] | None = None
    """The questions this flow asked in earlier rounds, by key (a digest of each), from
    the verified state: the only answers the input modules' ``response`` read. The
    server always sets it (empty without a state); None, in a context built by hand (a
    handler's unit test), takes every answer as it comes."""
    sealer: Callable[[Any], str] | None = None
    transport: str = "memory"
    headers: Mapping[str, str] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    emit: Emit = _drop
    state: dict[str, Any] = field(default_factory=dict)
    """Free for the application: middleware may put things here for handlers."""
    lifespan: Any = None
    """What the server's lifespans yielded (``Server(lifespan=...)``): one's value, or a
    tuple of several's; ``lifespan_as`` finds one by type."""
    caller_space: CallerSpace | None = field(default=None, repr=False)
    """What the server keeps for the request's caller (``user_state``); None in a
    context built by hand."""
    _progress: Progress = field(default_factory=Progress, repr=False)

    def seal(self, data: Any) -> str:
        """Seal ``data`` for the next round with the server's state keys.

        The token is bound to this request's method, salient params and principal; on
        the retry the server verifies it before any handler runs and hands the data back
        as ``state_data``.
        """
        if self.sealer is None:
            raise RuntimeError(
                "this server has no state keys: give it State(secret=...) or State(keyring=...)"
            )
        return self.sealer(data)

    def lifespan_as(self, kind: type[_T]) -> _T:
        """The value of type ``kind`` the server's lifespans yielded, typed; TypeError
        when none did (the server has no such lifespan, or it was not entered)."""
        found = self.lifespan if isinstance(self.lifespan, tuple) else (self.lifespan,)
        for value in found:
            if isinstance(value, kind):
                return value
        raise TypeError(f"no lifespan of this server yielded a {kind.__name__}")

    def supports(self, request: Mapping[str, Any]) -> bool:
        """Whether this request's client declared what ``request`` needs.

        The same rules admission applies, so a handler can ask only for what the
        client can answer instead of having the whole result refused with -32021.
        """
        return not missing([request], self.client_capabilities)

    def client_supports(self, extension_id: str) -> bool:
        """Whether this request's client declared the extension ``extension_id``."""
        extensions = self.client_capabilities.get("extensions")
        return isinstance(extensions, Mapping) and extension_id in extensions

    def require_scopes(self, needed: Iterable[str]) -> None:
        """Raise ``InsufficientScope`` naming all of ``needed`` unless every one is granted.

        For scopes that depend on the arguments; scopes fixed at registration
        (``@server.tool(scopes=[...])``) are checked before the handler runs. Nothing is
        checked where the transport does no OAuth (``scopes`` is None).
        """
        if self.scopes is None:
            return
        wanted = frozenset(needed)
        if not wanted <= self.scopes:
            raise InsufficientScope(wanted)

    async def exchange_token(
        self,
        *,
        audience: str | None = None,
        resource: str | None = None,
        scopes: Iterable[str] = (),
    ) -> Any:
        """The caller's token traded for one to call another service with, on the
        caller's behalf: an RFC 8693 token exchange for ``audience`` (or ``resource``)
        and ``scopes`` at the authorization server the resource names, kept until it
        expires (``snodo.auth.exchange``; an ``ExchangedToken``). RuntimeError where
        there is no caller's token to trade or no exchange configured."""
        if self.token_exchange is None:
            raise RuntimeError(
                "no token exchange for this request: it needs an OAuth-protected HTTP"
                " request and ProtectedResource(token_exchange=...)"
            )
        return await self.token_exchange(audience=audience, resource=resource, scopes=scopes)

    @property
    def user_state(self) -> UserState:
        """The caller's own key-value store across requests: its principal's, else its
        legacy session's (``snodo.server.callers``); ``await ctx.user_state.get(key)``."""
        if self.caller_space is None:
            raise RuntimeError("this context was not made by a server: it has no user_state")
        return self.caller_space.user_state(self)

    async def enable(
        self,
        *,
        names: str | Iterable[str] = (),
        tags: str | Iterable[str] = (),
        kinds: Iterable[str] | None = None,
    ) -> None:
        """Show this caller (its principal, else its legacy session) the items of these
        names or tags, of these ``kinds`` (``tools``, ``resources``, ``templates``,
        ``prompts``; all by default), across requests and workers
        (``snodo.server.visibility``); the listeners hear that the lists changed."""
        await self._space().change_visibility(self, True, _many(names), _many(tags), kinds)

    async def disable(
        self,
        *,
        names: str | Iterable[str] = (),
        tags: str | Iterable[str] = (),
        kinds: Iterable[str] | None = None,
    ) -> None:
        """Hide from this caller the items of these names or tags, as ``enable`` shows
        them: they answer it as missing ones."""
        await self._space().change_visibility(self, False, _many(names), _many(tags), kinds)

    async def reset_visibility(self) -> None:
        """Forget this caller's ``enable`` and ``disable``: it sees what the server shows."""
        await self._space().change_visibility(self, None, (), (), None)

    def _space(self) -> CallerSpace:
        if self.caller_space is None:
            raise RuntimeError("this context was not made by a server: it keeps nothing")
        return self.caller_space

    @property
    def is_retry(self) -> bool:
        return bool(self.input_responses) or self.request_state is not None

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> Sent:
        """Send notifications/progress if the client asked for it with a progressToken.

        progress must increase with each call (basic/patterns/progress.mdx). Sent at
        once, from a ``def`` or an ``async def`` handler alike; awaiting what it returns
        is allowed and does nothing more.
        """
        if self.progress_token is None:
            return SENT
        if self._progress.last is not None and progress <= self._progress.last:
            raise ValueError("progress must increase with every notification")
        self._progress.last = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.notify("notifications/progress", params)
        return SENT

    def log(self, level: str, data: Any, logger: str | None = None) -> Sent:
        """Send notifications/message when this request opted in at or below ``level``.

        With no ``META_LOG_LEVEL`` entry in the request's _meta nothing is sent
        (server/utilities/logging.mdx: the server MUST NOT emit log messages then).
        Sent at once; awaiting what it returns is allowed and does nothing more.
        """
        if level not in LOG_RANK:
            raise ValueError(f"unknown log level {level!r}")
        if self.log_level is None or LOG_RANK[level] < LOG_RANK[self.log_level]:
            return SENT
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.notify("notifications/message", params)
        return SENT

    def notify(self, method: str, params: dict[str, Any]) -> bool:
        """Send a request-scoped notification, if the request's revision defines
        ``method``: a client never gets a notification its revision lacks. Whether it
        was sent."""
        revision = self.revision
        if revision is not None and method not in revision.server_notifications:
            return False
        self.emit({"jsonrpc": "2.0", "method": method, "params": params})
        return True


BOUND_DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in fields(Context)
    if f.default is not MISSING and hasattr(type(f.default), "__get__")
}
"""Field defaults the class cannot hold for its instances: a function there would be
read back bound to the instance. The server writes these into each context it builds;
every other plain default is read from the class."""
FIELD_FACTORIES: tuple[tuple[str, Callable[[], Any]], ...] = tuple(
    (f.name, f.default_factory) for f in fields(Context) if f.default_factory is not MISSING
)
"""The fields whose default is made afresh for each context, with what makes it."""


UNTRACKED = Progress()
"""The progress of every context without a progress token: never read, never written."""


def names_context(annotation: Any) -> bool:
    """Whether a parameter's annotation is ``Context`` (the object, or its name in a
    string annotation): where handlers and dependencies get the request."""
    return annotation is Context or (
        isinstance(annotation, str) and annotation.rsplit(".", 1)[-1] == "Context"
    )


def refilled(ctx: Context, **changes: Any) -> Context:
    """``dataclasses.replace(ctx, **changes)`` in one step, as the server builds contexts:
    every other field, ``state`` included, is the same object as in ``ctx``."""
    copy = object.__new__(Context)
    copy.__dict__.update(ctx.__dict__)
    copy.__dict__.update(changes)
    return copy


def check_log_level(level: object) -> str | None:
    """A request's log level as given (None: it asked for no log messages); -32602 for
    anything but one of ``LOG_LEVELS``."""
    if level is None:
        return None
    if not isinstance(level, str) or level not in LOG_RANK:
        raise InvalidParams("Invalid log level")
    return level
