"""The request path of the transport-free core: one message in, one ``Reply`` out.

``Server.handle`` is this module's ``answer``; the order of the checks is
docs/request-checks.md. It lives apart from ``Server`` so that it can be compiled
(setup.py): programs set attributes of their own on a ``Server``, which a compiled class
would refuse, while a compiled function reads what it needs of one through ``Answerer``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

from snodo.core import jsonrpc
from snodo.core.admission import admit
from snodo.core.caching import NO_CACHE, CacheHint
from snodo.core.context import (
    ACCESS_TOKEN,
    BOUND_DEFAULTS,
    FIELD_FACTORIES,
    TOKEN_EXCHANGE,
    UNTRACKED,
    CallerSpace,
    Context,
    Emit,
    Progress,
    check_log_level,
    refilled,
)
from snodo.core.envelope import not_found, refuse_initialize, required_meta
from snodo.core.errors import (
    InsufficientScope,
    InternalError,
    McpError,
    UnsupportedProtocolVersion,
)
from snodo.core.input_responses import check_params
from snodo.core.observe import QUIET, Observer
from snodo.core.result import InputRequired
from snodo.core.state.keyring import Keyring
from snodo.core.state.sealing import (
    NOTHING_OPENED,
    Sealer,
    open_state,
    open_state_now,
    seal_asked,
)
from snodo.core.types import AnswerCheck, CallNext, Middleware, Offering, OpenStream, Outcome
from snodo.revisions import Revision

__all__ = ["Answerer", "CallNext", "Middleware", "Reply", "answer", "request_context"]

log = logging.getLogger("snodo")


class Reply:
    """What ``handle`` gives a transport for one message, and what to send with it.

    A plain class, not a dataclass: compiled, its constructor is native code, where a
    dataclass's generated ``__init__`` would run as Python on every request."""

    __slots__ = ("notifications", "required_scopes", "response", "subscription")

    def __init__(
        self,
        response: dict[str, Any] | None,
        notifications: list[dict[str, Any]] | None = None,
        subscription: OpenStream | None = None,
        required_scopes: tuple[str, ...] | None = None,
    ) -> None:
        self.response = response
        """None for a notification, and for an open subscription."""
        self.notifications: list[dict[str, Any]] = [] if notifications is None else notifications
        """Request-scoped notifications, when no ``emit`` streamed them as they happened."""
        self.subscription = subscription
        """An open subscriptions/listen stream; the transport closes it when the peer goes."""
        self.required_scopes = required_scopes
        """Every scope a request refused for insufficient scope needs (HTTP answers 403)."""

    def __repr__(self) -> str:
        return (
            f"Reply(response={self.response!r}, notifications={self.notifications!r}, "
            f"subscription={self.subscription!r}, required_scopes={self.required_scopes!r})"
        )

    @property
    def error_code(self) -> int | None:
        """The JSON-RPC error code of the response, None for a result or no response."""
        error = (self.response or {}).get("error")
        return int(error["code"]) if isinstance(error, dict) else None


class Lifespans(Protocol):
    """What the request path reads of a server's lifespans: what they yielded."""

    @property
    def value(self) -> Any: ...


class Answerer(Protocol):
    """What the request path reads of a server (``snodo.server.Server`` is one), on
    every request: settings changed on the server take effect on the next."""

    @property
    def authorization(self) -> object | None:
        """Whether the server requires a token (only ``None`` or not is read here)."""
        ...

    @property
    def offering(self) -> Offering: ...

    @property
    def keyring(self) -> Keyring: ...

    @property
    def lifespans(self) -> Lifespans: ...

    @property
    def clock(self) -> Callable[[], float]: ...

    @property
    def middlewares(self) -> list[Middleware]: ...

    @property
    def cache(self) -> dict[str, CacheHint]: ...

    @property
    def infos(self) -> dict[str, MappingProxyType[str, Any]]: ...

    @property
    def observer(self) -> Observer: ...

    @property
    def caller_space(self) -> CallerSpace | None:
        """What the server keeps for each caller, lent to every request's context."""
        ...

    @property
    def answer_checks(self) -> AnswerCheck | None:
        """None unless the server checks its answers against their revision."""
        ...

    def check_version(self, version: str) -> None:
        """Raise the protocol's error for a version the server does not serve."""
        ...


_NO_RESPONSES: Mapping[str, Any] = MappingProxyType({})  # every first round's input_responses


async def answer(
    server: Answerer,
    message: bytes | Any,
    principal: str | None,
    transport: str,
    headers: Mapping[str, str] | None,
    emit: Emit | None,
    scopes: Iterable[str] | None,
    checked_meta: tuple[dict[str, Any], str, dict[str, Any]] | None = None,
) -> Reply:
    """``Server.handle``: never raises for anything the peer sent.

    ``checked_meta``: what ``required_meta`` gives for this message's params, its version
    already checked against the supported ones, where the transport's own checks needed
    them first (HTTP's headers): the core does not work them out again.
    """
    if scopes is None and server.authorization is not None and transport != "stdio":
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
    request_id, method, params = incoming
    observer = server.observer
    observation = None
    if observer is not QUIET:
        observation = observer.request(incoming, "modern", transport, headers or {})
    collected: list[dict[str, Any]] = []
    checks = server.answer_checks  # None unless asked for: all it costs when off
    revision: Revision | None = None
    # The whole request in this one coroutine: each coroutine between the transport and
    # the handler costs an interpreted frame more per request.
    try:
        offering = server.offering
        # basic/versioning.mdx: name this core's versions
        if method == "initialize":
            refuse_initialize(params, offering.supported_versions)
        handler: Any = offering.methods.get(method)
        own = None
        if handler is None:  # an extension's method, or a core one served with server.method
            own = offering.extension_methods.get(method)
            if own is None:
                raise not_found(method, params)
            handler = own
        elif not offering.offers(method):
            raise not_found(method, params)
        if checked_meta is None:
            meta, version, declared = required_meta(params)
        else:
            meta, version, declared = checked_meta
        # The one lookup of the negotiated revision: its method table checks this request.
        revised = offering.tables.get(version)
        if revised is None:
            raise UnsupportedProtocolVersion(version, list(offering.supported_versions))
        table, revision = revised
        spec = table.get(method)  # the revision's generated row of the method
        if spec is None:
            if own is None or own.core:  # a core method this revision does not define
                raise not_found(method, params)
            spec = own  # an extension's method: its own params model
        checked_answers = check_params(spec.params, params, spec.input_required, revision)
        responses = params.get("inputResponses")
        # The revision's own keys (None where it has none: nothing is read then).
        level_key = revision.log_level_key
        level = None if level_key is None else meta.get(level_key)  # most ask for none
        info_key = revision.client_info_key
        request_params = MappingProxyType(params)
        keyring = server.keyring
        clock = server.clock
        # The echoed state is verified before the context exists: the context is built
        # once, with the state's data, and the sealer for the next round (which holds no
        # context).
        echoed = params.get("requestState")
        sealer = Sealer(keyring, method, request_params, clock, principal, echoed, observation)
        if echoed is None:  # a first round: nothing to open
            state_data, asked = NOTHING_OPENED
        else:  # no coroutine unless a guard must consume the state
            found = open_state_now(sealer)
            state_data, asked = found if found is not None else await open_state(sealer)
        ctx = request_context(
            {
                "request_id": request_id,
                "request_method": method,
                "request_params": request_params,
                "protocol_version": version,
                "revision": revision,
                "client_capabilities": MappingProxyType(declared),
                "client_info": None if info_key is None else meta.get(info_key),
                "log_level": None if level is None else check_log_level(level),
                "principal": principal,
                "scopes": granted,
                "progress_token": meta.get("progressToken"),
                "input_responses": MappingProxyType(responses) if responses else _NO_RESPONSES,
                "checked_answers": checked_answers,
                "request_state": sealer.request_state,
                "state_data": state_data,
                "asked": asked,
                "sealer": sealer,
                "lifespan": server.lifespans.value,
                "transport": transport,
                "headers": headers or {},
                "clock": clock,
                "emit": (emit or collected.append)
                if checks is None
                else checks.watch(revision, emit or collected.append, method),
                "caller_space": server.caller_space,
            }
        )
        if granted is not None:  # OAuth: the token the transport verified, if it did
            ctx.__dict__["access_token"] = ACCESS_TOKEN.get()
            ctx.__dict__["token_exchange"] = TOKEN_EXCHANGE.get()
        middlewares = server.middlewares
        if middlewares:
            outcome = await _through_middleware(middlewares, offering, ctx, handler)
        else:  # nothing in between: no chain to build, and no coroutine for one
            outcome = await handler(offering, ctx, ctx.request_params)
        if not isinstance(outcome, OpenStream):
            outcome = _finish(server, keyring, ctx, outcome, spec.cacheable, revision)
    except McpError as exc:
        needed = exc.scopes if isinstance(exc, InsufficientScope) else None
        reply = Reply(jsonrpc.error_response(request_id, exc), collected, None, needed)
    except Exception:
        log.exception("unexpected failure answering %s", method)
        reply = Reply(jsonrpc.error_response(request_id, InternalError()), collected)
    except BaseException:  # cancelled: the observation still ends
        if observation is not None:
            observation.cancelled()
        raise
    else:
        if isinstance(outcome, OpenStream):
            reply = Reply(None, collected, outcome)
        else:
            reply = Reply({"jsonrpc": "2.0", "id": request_id, "result": outcome}, collected)
    if checks is not None:
        checks.reply(revision, method, reply.response)
    if observation is not None:
        if reply.subscription is not None:
            observer.listen_streams(1)
        observation.finish(reply.response)
    return reply


async def _through_middleware(
    middlewares: list[Middleware], offering: Offering, original: Context, handler: Any
) -> Outcome:
    async def innermost(passed: Context) -> Outcome:
        # Only ``state`` travels from middleware to the handler.
        ctx = original if passed is original else refilled(original, state=passed.state)
        outcome: Outcome = await handler(offering, ctx, ctx.request_params)
        return outcome

    if len(middlewares) == 1:  # the common case: no link of the chain to build
        only: Outcome = await middlewares[0](original, innermost)
        return only
    call: CallNext = innermost
    for middleware in reversed(middlewares[1:]):
        call = _wrap(middleware, call)
    outcome: Outcome = await middlewares[0](original, call)
    return outcome


def _wrap(middleware: Middleware, call_next: CallNext) -> CallNext:
    async def call(ctx: Context) -> Any:
        return await middleware(ctx, call_next)

    return call


_DEFAULTED = frozenset(BOUND_DEFAULTS).union(name for name, _ in FIELD_FACTORIES)
"""The fields ``request_context`` fills in when the values leave them out."""


def request_context(values: dict[str, Any]) -> Context:
    """``Context(**values)``, as the server builds one for every request; ``values``, a
    dict made for this call, becomes the context's own ``__dict__``.

    A frozen dataclass assigns each of its fields through ``object.__setattr__``; taking
    the dict as it is costs a fraction of that, and it was the largest single cost of
    the core's request path (compiled here, with the path). A field the values leave
    out reads its default from the class, as a dataclass field with a plain default
    does, so only the fields made afresh (and ``BOUND_DEFAULTS``) are added. The values
    come as one dict, not as keywords, which would be gathered into another. The result
    equals the constructor's (tests/core/test_context.py checks it), for the same
    required fields.
    """
    ctx = object.__new__(Context)
    values["state"] = {}  # made afresh for each context, and no caller passes it
    # Progress is only ever reported with a token: without one, a shared tracker that
    # report_progress never reaches.
    values["_progress"] = Progress() if values.get("progress_token") is not None else UNTRACKED
    if not values.keys() >= _DEFAULTED:  # the server's own call leaves none out
        for name, default in BOUND_DEFAULTS.items():
            if name not in values:
                values[name] = default
        for name, make in FIELD_FACTORIES:  # any other made-afresh field left out
            if name not in values:
                values[name] = make()
    object.__setattr__(ctx, "__dict__", values)
    return ctx


def _finish(
    server: Answerer,
    keyring: Keyring,
    ctx: Context,
    outcome: Any,
    cacheable: bool,
    revision: Revision,
) -> dict[str, Any]:
    if isinstance(outcome, InputRequired):  # the request revision's rules, its model
        result = admit(ctx.request_method, outcome, ctx.client_capabilities, revision)
        state = seal_asked(keyring, ctx, outcome).request_state  # the questions
        if state is not None:
            result["requestState"] = state
    elif isinstance(outcome, dict):
        result = {"resultType": "complete", **outcome}
        if cacheable:
            hint = server.cache.get(ctx.request_method, NO_CACHE)
            result.setdefault("ttlMs", hint.ttl_ms)
            result.setdefault("cacheScope", hint.scope)
    else:
        log.error("%s produced %r, not a result", ctx.request_method, type(outcome).__name__)
        raise InternalError()
    meta = result.get("_meta")
    key = revision.server_info_key
    if key is None:  # the revision stamps no server info
        return result
    # The server's Implementation with the fields of the request's revision, the proxy's
    # dict copied in C.
    stamped = {key: server.infos[ctx.protocol_version].copy()}
    if isinstance(meta, dict):
        stamped.update(meta)
    result["_meta"] = stamped
    return result
