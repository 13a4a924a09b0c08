"""The transport-free server: one JSON-RPC message in, one reply out.

``Server.handle`` takes a message (JSON text as bytes, or a decoded value) and the facts only the
transport knows (principal, transport name, headers) and returns a ``Reply``: the
response, the request-scoped notifications that were not streamed, or an open
subscription. It does no I/O; stdio and HTTP are thin adapters around it.

A request passes, in order: envelope (-32700, -32600), method lookup (-32601, also for
removed methods and for features the server does not offer), ``_meta`` presence
(-32602), protocol version (-32022), params against the generated model (-32602),
middleware and handler, then admission of input-required results (-32603, -32021) and
decoration of complete ones (``resultType``, caching hints, ``serverInfo``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel, ValidationError

from snodo import jsonrpc, state
from snodo.admission import admit
from snodo.context import Context, Emit, check_log_level
from snodo.dispatch import HANDLERS, Outcome
from snodo.errors import (
    InternalError,
    InvalidParams,
    McpError,
    MethodNotFound,
    UnsupportedProtocolVersion,
)
from snodo.invoke import Handler, Invoker, invoker
from snodo.prompts import Prompt, make_prompt
from snodo.replay import MemoryGuard, ReplayGuard
from snodo.resources import Resource, ResourceTemplate, make_resource, make_template
from snodo.result import InputRequired
from snodo.subscriptions import Subscription, Subscriptions
from snodo.tools import Tool, make_tool
from snodo_wire import CreateMessageResult, ElicitResult, ListRootsResult, adapters
from snodo_wire.protocol import SUPPORTED_PROTOCOL_VERSIONS
from snodo_wire.tables import METHODS

__all__ = ["CacheHint", "Middleware", "Reply", "Server"]

log = logging.getLogger("snodo")

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"

CallNext = Callable[[Context], Awaitable[Any]]
Middleware = Callable[[Context, CallNext], Awaitable[Any]]
"""``async def mw(ctx, call_next)``: runs around every handler, on every retry too.

It may inspect the context, put things in ``ctx.state``, call ``call_next`` (with the
same context, or one whose ``state`` it replaced) and change what comes back. It cannot
change what the framework checks: the handler and admission see the framework-owned
fields of the original request whatever context is passed on.
"""

F = TypeVar("F", bound=Handler)


@dataclass(frozen=True, slots=True)
class CacheHint:
    """ttlMs and cacheScope for cacheable results (server/utilities/caching.mdx)."""

    ttl_ms: int = 0
    scope: Literal["public", "private"] = "private"


@dataclass(slots=True)
class Reply:
    response: dict[str, Any] | None
    """None for a notification, and for an open subscription."""
    notifications: list[dict[str, Any]] = field(default_factory=list)
    """Request-scoped notifications, when no ``emit`` streamed them as they happened."""
    subscription: Subscription | None = None
    """An open subscriptions/listen stream; the transport closes it when the peer goes."""

    @property
    def error_code(self) -> int | None:
        error = (self.response or {}).get("error")
        return int(error["code"]) if isinstance(error, dict) else None


def _summary(exc: ValidationError, prefix: str = "") -> str:
    """Where and why params failed, never the submitted values."""
    first = exc.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(step) for step in ([prefix] if prefix else []) + list(first["loc"]))
    return (
        f"Invalid params: {where}: {first['msg']}" if where else f"Invalid params: {first['msg']}"
    )


_ANSWER_KEYS: dict[str, type[BaseModel]] = {"action": ElicitResult, "roots": ListRootsResult}
"""A required key of each answer kind; anything else is most likely a sampling result."""


def _check_responses(responses: Any) -> None:
    """The retry's inputResponses, each a valid InputResponse; as the generated union
    decides, but trying first the branch the answer's keys point to (the union is
    untagged, and trying all three costs several times more)."""
    if not isinstance(responses, dict):
        raise InvalidParams("Invalid params: inputResponses: must be an object")
    for key, answer in responses.items():
        if isinstance(answer, dict):
            likely = next((m for k, m in _ANSWER_KEYS.items() if k in answer), CreateMessageResult)
            try:
                likely.model_validate(answer)
                continue
            except ValidationError:
                pass
        try:
            adapters.input_response.validate_python(answer)
        except ValidationError as exc:
            raise InvalidParams(_summary(exc, f"inputResponses.{key}")) from exc


def required_meta(params: Any) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """``_meta``, its protocol version and client capabilities, which every request
    must carry (basic/index.mdx); -32602 when any is missing."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise InvalidParams("Missing required params._meta")
    version = meta.get(PROTOCOL_VERSION)
    if not isinstance(version, str):
        raise InvalidParams(f"Missing required _meta field {PROTOCOL_VERSION}")
    declared = meta.get(CLIENT_CAPABILITIES)
    if not isinstance(declared, dict):
        raise InvalidParams(f"Missing required _meta field {CLIENT_CAPABILITIES}")
    return meta, version, declared


class Server:
    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        description: str | None = None,
        instructions: str | None = None,
        website_url: str | None = None,
        supported_versions: Iterable[str] = SUPPORTED_PROTOCOL_VERSIONS,
        page_size: int | None = None,
        list_cache: CacheHint = CacheHint(),
        read_cache: CacheHint = CacheHint(),
        discover_cache: CacheHint = CacheHint(),
        clock: Callable[[], float] = time.time,
        state_secret: bytes | None = None,
        state_keys: Sequence[tuple[str, bytes]] | None = None,
        state_ttl: float = state.DEFAULT_TTL,
        state_guard: ReplayGuard | bool = False,
        state_encrypted: bool = False,
    ) -> None:
        info: dict[str, Any] = {"name": name, "version": version}
        for key, value in (
            ("title", title),
            ("description", description),
            ("websiteUrl", website_url),
        ):
            if value is not None:
                info[key] = value
        self.info: Mapping[str, Any] = MappingProxyType(info)
        self.instructions = instructions
        self.supported_versions = tuple(supported_versions)
        self.page_size = page_size
        self.cache = {
            "server/discover": discover_cache,
            "resources/read": read_cache,
        }
        self.list_cache = list_cache
        self.clock = clock
        if state_secret is not None or state_keys is not None:
            # Checked now, so a bad key fails at start-up rather than on a request.
            state.check_options(
                secret=state_secret, keys=state_keys, ttl=state_ttl, encrypted=state_encrypted
            )
        elif state_guard is not False or state_encrypted:
            raise ValueError("state_guard and state_encrypted need state_secret or state_keys")
        self.state_secret = state_secret
        self.state_keys = None if state_keys is None else list(state_keys)
        self.state_ttl = state_ttl
        # True: a MemoryGuard on the server's clock (one process). With a guard every
        # state is sealed one-time and consumed when it comes back (mrtr.mdx: at-most-once
        # consumption MUST be enforced server-side).
        self.state_guard: ReplayGuard | None = None
        if state_guard is True:
            self.state_guard = MemoryGuard(clock=clock)
        elif not isinstance(state_guard, bool):
            if not callable(getattr(state_guard, "consume", None)):
                raise TypeError("state_guard must be True or a ReplayGuard (async consume)")
            self.state_guard = state_guard
        self.state_encrypted = state_encrypted
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.completions: dict[tuple[str, str], Invoker] = {}
        self.middlewares: list[Middleware] = []
        self.subscriptions = Subscriptions()

    # -- registration --------------------------------------------------------------

    @overload
    def tool(self, function: F, /) -> F: ...
    @overload
    def tool(self, function: None = None, /, **options: Any) -> Callable[[F], F]: ...
    def tool(self, function: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a tool: ``@server.tool`` or ``@server.tool(name=..., ...)``."""

        def register(fn: F) -> F:
            self.add_tool(fn, **options)
            return fn

        return register(function) if function is not None else register

    def add_tool(self, function: Handler, **options: Any) -> Tool:
        tool = make_tool(function, **options)
        changed = tool.name in self.tools or bool(self.tools)
        self.tools[tool.name] = tool
        if changed:
            self.subscriptions.list_changed("toolsListChanged")
        return tool

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is not None:
            self.subscriptions.list_changed("toolsListChanged")

    def resource(self, uri: str, **options: Any) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.resources[uri] = make_resource(fn, uri, **options)
            self.subscriptions.list_changed("resourcesListChanged")
            return fn

        return register

    def resource_template(self, uri_template: str, **options: Any) -> Callable[[F], F]:
        def register(fn: F) -> F:
            self.templates.append(make_template(fn, uri_template, **options))
            return fn

        return register

    @overload
    def prompt(self, function: F, /) -> F: ...
    @overload
    def prompt(self, function: None = None, /, **options: Any) -> Callable[[F], F]: ...
    def prompt(self, function: F | None = None, /, **options: Any) -> F | Callable[[F], F]:
        """Register a prompt: ``@server.prompt`` or ``@server.prompt(name=..., ...)``."""

        def register(fn: F) -> F:
            prompt = make_prompt(fn, **options)
            self.prompts[prompt.name] = prompt
            self.subscriptions.list_changed("promptsListChanged")
            return fn

        return register(function) if function is not None else register

    def completion(
        self, ref_type: Literal["ref/prompt", "ref/resource"], name: str
    ) -> Callable[[F], F]:
        """Complete arguments of a prompt (by name) or a resource template (by URI template).

        The function receives ``argument``, ``value`` and ``context`` (the other
        arguments already given) and returns candidate strings.
        """

        def register(fn: F) -> F:
            self.completions[(ref_type, name)] = invoker(fn)
            return fn

        return register

    def middleware(self, function: Middleware) -> Middleware:
        """Add a middleware; the first added is the outermost."""
        self.middlewares.append(function)
        return function

    def notify_resource_updated(self, uri: str) -> int:
        return self.subscriptions.resource_updated(uri)

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> int:
        return self.subscriptions.list_changed(f"{kind}ListChanged")

    # -- protocol --------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"logging": {}}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"listChanged": True, "subscribe": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self.prompts or self.templates:
            caps["completions"] = {}
        return caps

    def check_version(self, version: str) -> None:
        if version not in self.supported_versions:
            raise UnsupportedProtocolVersion(version, list(self.supported_versions))

    def _offers(self, method: str) -> bool:
        feature = method.split("/", 1)[0]
        caps = self.capabilities()
        if feature in ("tools", "resources", "prompts"):
            return feature in caps
        if feature == "completion":
            return "completions" in caps
        return True

    async def handle(
        self,
        message: bytes | Any,
        *,
        principal: str | None = None,
        transport: str = "memory",
        headers: Mapping[str, str] | None = None,
        emit: Emit | None = None,
    ) -> Reply:
        """Answer one JSON-RPC message. Never raises for anything the peer sent."""
        try:
            # Bytes are JSON text; anything else is an already decoded value (a str
            # included: a JSON string body is a value, never text to decode again).
            decoded = jsonrpc.decode(message) if isinstance(message, bytes) else message
            incoming = jsonrpc.parse(decoded)
        except McpError as exc:
            return Reply(jsonrpc.error_response(jsonrpc.error_id(exc), exc))
        if not isinstance(incoming, jsonrpc.Request):
            return Reply(None)  # notifications (cancellation) and stray responses
        collected: list[dict[str, Any]] = []
        try:
            outcome = await self._request(
                incoming, principal, transport, headers or {}, emit or collected.append
            )
        except McpError as exc:
            return Reply(jsonrpc.error_response(incoming.id, exc), collected)
        except Exception:
            log.exception("unexpected failure answering %s", incoming.method)
            return Reply(jsonrpc.error_response(incoming.id, InternalError()), collected)
        if isinstance(outcome, Subscription):
            return Reply(None, collected, outcome)
        return Reply(jsonrpc.result_response(incoming.id, outcome), collected)

    async def _request(
        self,
        request: jsonrpc.Request,
        principal: str | None,
        transport: str,
        headers: Mapping[str, str],
        emit: Emit,
    ) -> dict[str, Any] | Subscription:
        spec = METHODS.get(request.method)
        handler = HANDLERS.get(request.method)
        if spec is None or handler is None or not self._offers(request.method):
            raise MethodNotFound(f"Method not found: {request.method}")
        params = request.params
        meta, version, declared = required_meta(params)
        self.check_version(version)
        responses = params.get("inputResponses")
        try:
            if responses is not None and spec.input_required:
                _check_responses(responses)
                spec.params.model_validate({**params, "inputResponses": {}})
            else:
                spec.params.model_validate(params)
        except ValidationError as exc:
            raise InvalidParams(_summary(exc)) from exc
        ctx = Context(
            request_id=request.id,
            request_method=request.method,
            request_params=MappingProxyType(params),
            protocol_version=version,
            client_capabilities=MappingProxyType(declared),
            client_info=meta.get(CLIENT_INFO),
            log_level=check_log_level(meta.get(LOG_LEVEL)),
            principal=principal,
            progress_token=meta.get("progressToken"),
            input_responses=MappingProxyType(params.get("inputResponses") or {}),
            request_state=params.get("requestState"),
            transport=transport,
            headers=headers,
            clock=self.clock,
            emit=emit,
        )
        if self.state_secret is not None or self.state_keys is not None:
            ctx = await self._with_state(ctx)
        outcome = await self._run(ctx, handler)
        if isinstance(outcome, Subscription):
            return outcome
        return self._finish(ctx, outcome)

    async def _with_state(self, ctx: Context) -> Context:
        """Verify an echoed requestState before anything else sees the request.

        With state keys configured, a forged, expired or misbound state is -32602 and
        no middleware or handler runs; a valid one arrives as ``ctx.state_data``. With a
        guard, a state presented a second time is refused the same way (and a store
        failure is an internal error): it is consumed here, before the handler runs.
        """
        options: dict[str, Any] = {
            "secret": self.state_secret,
            "keys": self.state_keys,
            "principal": ctx.principal,
            "ttl": self.state_ttl,
        }
        data = None
        guard = self.state_guard
        if ctx.request_state is not None and guard is not None:
            data = await state.open_once(ctx.request_state, ctx, guard=guard, **options)
        elif ctx.request_state is not None:
            data = state.open(ctx.request_state, ctx, **options)
        sealing = replace(ctx, sealer=None)
        once, encrypted = guard is not None, self.state_encrypted

        def sealer(value: Any) -> str:
            return state.seal(value, sealing, once=once, encrypted=encrypted, **options)

        return replace(ctx, state_data=data, sealer=sealer)

    async def _run(self, original: Context, handler: Any) -> Outcome:
        async def innermost(passed: Context) -> Outcome:
            # Only ``state`` travels from middleware to the handler.
            ctx = original if passed is original else replace(original, state=passed.state)
            outcome: Outcome = await handler(self, ctx, ctx.request_params)
            return outcome

        call: CallNext = innermost
        for middleware in reversed(self.middlewares):
            call = _wrap(middleware, call)
        outcome: Outcome = await call(original)
        return outcome

    def _finish(self, ctx: Context, outcome: Any) -> dict[str, Any]:
        if isinstance(outcome, InputRequired):
            result = admit(ctx.request_method, outcome, ctx.client_capabilities)
        elif isinstance(outcome, dict):
            result = {"resultType": "complete", **outcome}
            if METHODS[ctx.request_method].cacheable:
                hint = self.cache.get(ctx.request_method, self.list_cache)
                result.setdefault("ttlMs", hint.ttl_ms)
                result.setdefault("cacheScope", hint.scope)
        else:
            log.error("%s produced %r, not a result", ctx.request_method, type(outcome).__name__)
            raise InternalError()
        meta = result.get("_meta")
        result["_meta"] = {SERVER_INFO: dict(self.info), **(meta if isinstance(meta, dict) else {})}
        return result


def _wrap(middleware: Middleware, call_next: CallNext) -> CallNext:
    async def call(ctx: Context) -> Any:
        return await middleware(ctx, call_next)

    return call
