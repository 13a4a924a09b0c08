"""A dual-era MCP client: the current revision with MRTR, legacy as fallback.

How each request reaches the server, in whichever era it speaks, is the
``Connection``'s business (``snodo.client.connection``): ``_meta``, headers, the era
verdict, the legacy session. ``call_tool``, ``read_resource`` and ``get_prompt`` run
the MRTR loop (``snodo.client.rounds``); a result of another kind (a task) is the
extension's client half's to follow (``snodo.client.extensions.ResultKind``: the tasks
extension's, ``snodo.extensions.tasks.TasksClient``). An optional deadline bounds a
whole call, task included, and ``limits.request_timeout`` every request in it
(``snodo.client.limits``). With ``manual=True`` a paused flow comes back as a ``Flow``
(a task as its half's handle), plain data a distributed client can persist and
``resume`` elsewhere. With a legacy server the same methods return the
same types (``snodo.client.results``). Whatever the server does, a call ends within
its bounds and raises only ``snodo.client.errors``.

The package is the whole client: connection, era, rounds, handlers, limits, listings,
``search`` (``search_tools``), results, errors, ``cards`` (a server's card, read
before connecting), ``extensions`` (the public extension API: what an extension's client
half declares and plugs in), a legacy session's client side, transports. It may import
the core, ``snodo.server`` (its in-memory transport) and ``snodo.search`` only; nothing
below imports it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from snodo.client.cache import ResponseCache
from snodo.client.call_scope import CALL_DEADLINE, OnLog, OnProgress, call_deadline, call_scope
from snodo.client.cards import read_card
from snodo.client.checks import OutputSchemas, safe_result
from snodo.client.connection import Connection, Notify
from snodo.client.era import Era, EraChoice, ModernOnly, UnsupportedServer, spoken_versions
from snodo.client.errors import (
    ClientError,
    DeadlineExceeded,
    LimitExceeded,
    NotAuthorized,
    OutputMismatch,
    ProtocolViolation,
    RequestError,
    RequestTimeout,
    TooManyRounds,
    TransportError,
)
from snodo.client.extensions import ClientExtension, Following, ResultKind
from snodo.client.handlers import InputHandlers
from snodo.client.legacy_session import LegacySession
from snodo.client.limits import ClientLimits
from snodo.client.listings import Listed, Listings
from snodo.client.requester import Requester
from snodo.client.results import RESULT_MODELS, Flow, InputHandler, complete_result, result_of
from snodo.client.rounds import FlowBounds, run_flow
from snodo.client.search import ToolFinder
from snodo.client.tool_outputs import OutputSelector, selectors
from snodo.client.transports import ClientTransport, HttpTransport, StdioTransport
from snodo.client.url_required import URL_REQUIRED, Completions, UrlElicitationRequired
from snodo.core.errors import ErrorCode
from snodo.core.http_headers import request_headers
from snodo.revisions import REVISIONS, Revisions
from snodo.revisions.authoring import (
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)

__all__ = [
    "Client",
    "ClientError",
    "ClientLimits",
    "DeadlineExceeded",
    "Flow",
    "InputHandler",
    "LimitExceeded",
    "Listed",
    "ModernOnly",
    "NotAuthorized",
    "OutputMismatch",
    "ProtocolViolation",
    "RequestError",
    "RequestTimeout",
    "ResponseCache",
    "TooManyRounds",
    "TransportError",
    "UnsupportedServer",
    "UrlElicitationRequired",
    "complete_result",
    "request_headers",
]


class Client:
    """An MCP client for servers of either era, with one API.

    Install handlers for what the user can do (``elicitation``, ``url_elicitation``,
    ``sampling``, ``roots``); capabilities are declared from them. ``extensions``
    declares extensions by identifier with their settings
    (``snodo.extensions.apps.DECLARE``, say); an extension's client half adds itself
    (``add_extension``: ``TasksClient(client)`` declares tasks and follows them).
    ``era``: ``"auto"`` (probe once, then remember), ``"modern"`` or ``"legacy"``.
    ``probe_timeout`` bounds the stdio probe: a server silent that long is legacy.
    ``limits`` bounds what a server can make the client wait for or hold
    (``ClientLimits``; give ``Client.http``/``Client.stdio`` the same to bound the
    transport's reading too). ``cache``: results kept as their caching
    hints allow (``snodo.client.cache``; a ``ResponseCache`` to share one between
    clients, False for none); ``principal`` names whom this client acts for, so that
    clients sharing a cache share private results only with their own principal.
    ``versions``: the modern protocol versions it speaks, newest first (by default
    every modern revision the catalog does not mark a draft: the client's own choice,
    whatever a server serves); it starts with ``protocol_version`` (the newest of
    them) and settles on the newest the server speaks too, so a client of a newer
    snodo keeps working with servers of older revisions. ``revisions``: the registry
    its answers are checked with.
    """

    def __init__(
        self,
        transport: ClientTransport,
        *,
        name: str = "snodo-client",
        version: str = "0.1.0",
        protocol_version: str | None = None,
        versions: Sequence[str] | None = None,
        revisions: Revisions = REVISIONS,
        era: EraChoice = "auto",
        probe_timeout: float = 5.0,
        elicitation: InputHandler | None = None,
        url_elicitation: InputHandler | None = None,
        sampling: InputHandler | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        roots: InputHandler | None = None,
        extensions: Mapping[str, Mapping[str, Any]] | None = None,
        max_rounds: int = 10,
        backoff: tuple[float, float] = (0.05, 2.0),
        deadline: float | None = None,
        on_notification: Callable[[dict[str, Any]], None] | None = None,
        limits: ClientLimits | None = None,
        cache: bool | ResponseCache = True,
        principal: Hashable | None = None,
    ) -> None:
        if era not in ("auto", "modern", "legacy"):
            raise ValueError(f"era must be 'auto', 'modern' or 'legacy', not {era!r}")
        spoken = spoken_versions(versions, protocol_version, revisions)
        self.inputs = InputHandlers(
            elicitation=elicitation,
            url_elicitation=url_elicitation,
            sampling=sampling,
            sampling_tools=sampling_tools,
            sampling_context=sampling_context,
            roots=roots,
        )
        self.inputs.extensions = {key: dict(value) for key, value in (extensions or {}).items()}
        self.declared_modern: dict[str, dict[str, Any]] = {}
        """Extensions declared on modern requests only (``ClientExtension(legacy=False)``)."""
        self.extensions: dict[str, ClientExtension] = {}
        """The extensions' client halves added (``add_extension``), by identifier."""
        self.results: dict[str, ResultKind] = {}
        """The kinds of result the halves added take, by ``resultType`` (a task)."""
        self.max_rounds = max_rounds
        self.limits = limits or ClientLimits()
        self.backoff = backoff
        self.deadline = deadline
        self.on_notification = on_notification or (lambda _: None)
        self.outputs = OutputSchemas()
        """The listed tools' output schemas, against which results are checked."""
        self.cache: ResponseCache | None = (
            ResponseCache() if cache is True else None if cache is False else cache
        )
        self.principal = object() if principal is None else principal
        self.completions = Completions()
        url = getattr(transport, "url", None)
        self.origin: Hashable = url if isinstance(url, str) else object()
        self.connection = Connection(
            transport,
            info={"name": name, "version": version},
            protocol_version=protocol_version or spoken[0],
            era=era,
            probe_timeout=probe_timeout,
            capabilities=self.capabilities,
            inputs=self.inputs,
            on_notification=self._notified,
            limits=self.limits,
            versions=spoken,
            revisions=revisions,
        )
        # The parts that send get the one way to send and the call's deadline.
        requester = Requester(self._send, self._until)
        self._listings = Listings(
            requester, self.connection, self.outputs, self.limits, self.cache, self.origin
        )
        self._finder = ToolFinder(
            requester, self.connection, self.outputs, self.list_tools, self.call_tool
        )

    @classmethod
    def http(cls, url: str, *, auth: Any = None, **options: Any) -> Client:
        """A client for the HTTP endpoint at ``url``; ``auth``: e.g. ``snodo.oauth.OAuth``."""
        return cls(HttpTransport(url, auth=auth, limits=options.get("limits")), **options)

    @classmethod
    def stdio(
        cls, argv: Sequence[str], *, env: Mapping[str, str] | None = None, **options: Any
    ) -> Client:
        """A client for a server it starts as a subprocess (``argv``), over stdio;
        ``stderr=`` (a file) takes the child's stderr, else it is this process's."""
        stderr = options.pop("stderr", None)
        transport = StdioTransport(argv, env=env, limits=options.get("limits"), stderr=stderr)
        return cls(transport, **options)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """End the legacy session (waiting at most ``close_grace``), then the transport."""
        await self.connection.close()

    @property
    def transport(self) -> ClientTransport:
        return self.connection.transport

    @property
    def era(self) -> Era | None:
        """``"modern"`` or ``"legacy"`` once known, else None."""
        return self.connection.era

    @property
    def legacy(self) -> LegacySession | None:
        """The legacy session, while one is open."""
        return self.connection.legacy

    @property
    def protocol_version(self) -> str:
        """The revision spoken (a -32022 retry may have changed it)."""
        return self.connection.protocol_version

    @property
    def declared(self) -> dict[str, dict[str, Any]]:
        """The extensions this client declares in both eras, by identifier."""
        return self.inputs.extensions

    def add_extension(self, extension: ClientExtension) -> ClientExtension:
        """Take part in an extension (``snodo.client.extensions``): declared from now
        on, its hooks plugged in; it replaces an earlier half with its identifier."""
        self.extensions[extension.id] = extension
        extension.install(self)
        return extension

    def capabilities(self) -> dict[str, Any]:
        """What the installed handlers and ``extensions`` let this client declare on a
        modern request; a legacy ``initialize`` declares all but the extensions
        declared for modern requests only (tasks)."""
        declared = self.inputs.capabilities()
        modern = dict(self.declared_modern)
        if modern:
            declared["extensions"] = {**declared.get("extensions", {}), **modern}
        return declared

    server_card = staticmethod(read_card)
    """A server's Server Card, read before connecting (``snodo.client.cards``)."""

    # -- listings ------------------------------------------------------------------------

    async def list_tools(self) -> Listed[Tool]:
        """Every tool, following cursors. Tools whose x-mcp-header use is invalid are
        dropped (basic/transports/streamable-http.mdx), and the rest remembered so that
        calls carry their Mcp-Param headers and results are checked against their
        output schemas."""
        return await self._listings.tools()

    async def list_resources(self) -> Listed[Resource]:
        """Every resource, following cursors."""
        return await self._listings.resources()

    async def list_resource_templates(self) -> Listed[ResourceTemplate]:
        """Every resource template, following cursors."""
        return await self._listings.resource_templates()

    async def list_prompts(self) -> Listed[Prompt]:
        """Every prompt, following cursors."""
        return await self._listings.prompts()

    async def server_supports(self, extension_id: str) -> bool:
        """Whether the server advertises the extension ``extension_id`` (its
        ``server/discover``, or a legacy server's ``initialize`` answer)."""
        return await self._listings.server_supports(extension_id)

    async def search_tools(self, query: str, *, limit: int = 5) -> list[Tool]:
        """The tools that fit ``query``, best first, full definitions; [] when none fits
        (``snodo.client.search``: by whatever the server offers, else searched here)."""
        return await self._finder.search(query, limit=limit)

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its raw result, in whichever era the server speaks
        (a task, or any kind of result an extension's half takes, followed to its raw
        result); a modern server's -32022 is retried once with a version both speak.
        Bounded by ``deadline`` and ``request_timeout``."""
        until = self._until()
        result = await self._send(method, dict(params or {}), until=until)
        kind = result.get("resultType", "complete")
        if kind in ("complete", "input_required"):
            return result
        followed = await self._taker(kind).follow(self._following(until), method, result, False)
        if not isinstance(followed, dict):
            raise ProtocolViolation(f"the {kind!r} result of {method} did not end in a result")
        return followed

    def _taker(self, kind: Any) -> ResultKind:
        """The half that takes results of ``kind``; none: the server broke the protocol."""
        taker = self.results.get(kind) if isinstance(kind, str) else None
        if taker is None:
            raise ProtocolViolation(
                f"unknown resultType {str(kind)[:80]!r}:"
                " this client did not declare an extension that takes it"
            )
        return taker

    def _following(self, until: float | None) -> Following:
        bounds = FlowBounds(self.max_rounds, self.backoff, self._deadline(), self.limits)
        return Following(self._send_modern, self.inputs, bounds, until)

    async def _send_modern(
        self, method: str, params: dict[str, Any], until: float | None
    ) -> dict[str, Any]:
        return await self._send(method, params, True, until)

    def following(self) -> Following:
        """How an extension's half sends outside a call, within the client's bounds
        (``snodo.client.extensions.Following``)."""
        return self._following(self._until())

    def _deadline(self) -> float | None:
        """This call's deadline (``deadline=`` on the call), else the client's."""
        given = CALL_DEADLINE.get()
        return self.deadline if given is None else given

    def _until(self) -> float | None:
        deadline = self._deadline()
        return None if deadline is None else time.monotonic() + deadline

    async def _send(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool = False,
        until: float | None = None,
        notify: Notify | None = None,
    ) -> dict[str, Any]:
        cache = self.cache
        if cache is not None:
            kept = cache.get(self.origin, self.principal, method, params)
            if kept is not None:
                return kept
        result = await self.connection.send(
            method, params, modern_only, until, self._deadline(), notify
        )
        result = safe_result(method, result)  # unsafe icons: neither returned nor kept
        if cache is not None:
            cache.put(self.origin, self.principal, method, params, result)
        return result

    def _notified(self, note: dict[str, Any]) -> None:
        """A notification no call took: it may make kept results stale; then the
        client's ``on_notification``."""
        if self.cache is not None:
            self.cache.notified(self.origin, note)
        self.completions.notified(note)
        self.on_notification(note)

    # -- MRTR ----------------------------------------------------------------------------

    async def run(
        self,
        method: str,
        params: Mapping[str, Any],
        manual: bool = False,
        notify: Notify | None = None,
    ) -> Any:
        """Send the request, answering input requests and retrying until complete;
        ``notify`` takes the notifications of its rounds (``on_notification`` else). A
        legacy server's -32042 is met as ``snodo.client.url_required`` says."""
        params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        until = self._until()
        try:
            return await self._rounds(method, params, None, None, manual, notify=notify)
        except RequestError as refused:
            if refused.code != URL_REQUIRED or self.era != "legacy":
                raise
            left = self.limits.request_timeout if until is None else until - time.monotonic()
            await self.completions.visit(refused, self.inputs, left)
            return await self._rounds(method, params, None, None, manual, notify=notify)

    async def resume(
        self,
        paused: Flow | Any,
        responses: Mapping[str, Any] | None = None,
        manual: bool = False,
    ) -> Any:
        """Continue a paused flow or a task, here or in another process: answer its
        input requests (or send ``responses`` as the answers) and go on with the same
        bounds as ``run``. A task is followed to its result; with ``manual`` it comes
        back as its handle when it needs input this client has not given: ``paused``
        that is no ``Flow`` is the half's that ``resumes`` it (a task's handle)."""
        if not isinstance(paused, Flow):
            for taker in self.results.values():
                if taker.resumes(paused):
                    return await taker.resume(self.following(), paused, responses, manual)
            raise TypeError(f"nothing this client takes resumes a {type(paused).__name__}")
        raw = paused.result.model_dump(mode="json", by_alias=True)
        requests: dict[str, Any] = raw.get("inputRequests") or {}
        if responses is not None:
            answers: dict[str, Any] | None = dict(responses)
        else:
            answers = await self.inputs.answer_round(requests, self.limits.max_input_requests)
        state = raw.get("requestState")
        return await self._rounds(
            paused.method,
            paused.params,
            answers if (answers or responses is not None) else None,
            state if isinstance(state, str) else None,
            manual,
            resuming=True,
        )

    async def _rounds(
        self,
        method: str,
        params: dict[str, Any],
        responses: dict[str, Any] | None,
        state: str | None,
        manual: bool,
        resuming: bool = False,
        notify: Notify | None = None,
    ) -> Any:
        async def send(sent: dict[str, Any], until: float | None) -> dict[str, Any]:
            return await self._send(method, sent, manual or resuming, until, notify)

        async def on_other(kind: str, result: dict[str, Any], until: float | None) -> Any:
            taker = self._taker(kind)
            return _typed(
                method, await taker.follow(self._following(until), method, result, manual)
            )

        bounds = FlowBounds(self.max_rounds, self.backoff, self._deadline(), self.limits)
        return await run_flow(
            send, self.inputs, bounds, method, params, responses, state, manual, on_other
        )

    # -- the methods -----------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        manual: bool = False,
        meta: Mapping[str, Any] | None = None,
        on_progress: OnProgress | None = None,
        on_log: OnLog | None = None,
        log_level: str | None = None,
        deadline: float | None = None,
        outputs: Iterable[OutputSelector] | None = None,
    ) -> Any:
        """The tool's CallToolResult, whether or not the server made a task; with
        ``manual=True`` a Flow when input is needed first, a task's handle for a task.
        ``on_progress(progress, total, message)`` and ``on_log(params)`` take this
        call's progress and log messages, at ``log_level`` and above; ``deadline``
        bounds this call in place of the client's (``call_scope``). ``outputs``: the
        (audience, format) pairs to be answered with, sent as ``requestedOutputs`` to a
        server that speaks SEP-3279's variants (``snodo.client.tool_outputs``); the
        result reads the same either way."""
        requested = None if outputs is None else selectors(outputs)
        with call_deadline(deadline):
            return await self._call_tool(
                name, arguments, manual, meta, on_progress, on_log, log_level, requested
            )

    async def _call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        manual: bool,
        meta: Mapping[str, Any] | None,
        on_progress: OnProgress | None,
        on_log: OnLog | None,
        log_level: str | None,
        requested: list[dict[str, str]] | None = None,
    ) -> Any:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if requested is not None:
            params["requestedOutputs"] = requested
        if meta:
            params["_meta"] = dict(meta)
        notify = call_scope(params, on_progress, on_log, log_level, self._notified)
        try:
            result = await self.run("tools/call", params, manual, notify)
        except RequestError as refused:
            # server/tools.mdx (x-mcp-header): a header-mismatch refusal for a tool whose
            # header parameters this client does not know (never listed, or changed
            # since) SHOULD be met by listing the tools again; then one retry.
            if refused.code != ErrorCode.HEADER_MISMATCH or self.era != "modern":
                raise
            known = self.connection.tool_schemas.get(name)
            await self.list_tools()
            if self.connection.tool_schemas.get(name) == known:
                raise  # the listing taught nothing new: the mismatch is the caller's
            result = await self.run("tools/call", params, manual, notify)
        if isinstance(result, CallToolResult):
            self.outputs.check(name, result.model_dump(mode="json", by_alias=True))
        return result

    async def read_resource(
        self,
        uri: str,
        *,
        manual: bool = False,
        on_progress: OnProgress | None = None,
        on_log: OnLog | None = None,
        log_level: str | None = None,
        deadline: float | None = None,
    ) -> Any:
        """The ReadResourceResult (a Flow with ``manual=True`` when input is needed);
        progress, logs and deadline as ``call_tool`` takes them."""
        params: dict[str, Any] = {"uri": uri}
        notify = call_scope(params, on_progress, on_log, log_level, self._notified)
        with call_deadline(deadline):
            return await self.run("resources/read", params, manual, notify)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        manual: bool = False,
        on_progress: OnProgress | None = None,
        on_log: OnLog | None = None,
        log_level: str | None = None,
        deadline: float | None = None,
    ) -> Any:
        """The GetPromptResult (a Flow with ``manual=True`` when input is needed);
        progress, logs and deadline as ``call_tool`` takes them."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        notify = call_scope(params, on_progress, on_log, log_level, self._notified)
        with call_deadline(deadline):
            return await self.run("prompts/get", params, manual, notify)

    async def discover(self) -> DiscoverResult:
        """server/discover; from a legacy server, the facts of its InitializeResult."""
        return complete_result(DiscoverResult, await self.request("server/discover"))

    async def ping(self) -> None:
        """An error unless the server is there: ``ping`` to a legacy server; a modern
        one (which has no ``ping``) is asked ``server/discover``, past the cache."""
        until, deadline = self._until(), self._deadline()
        if self.era != "legacy":  # this may settle the era as legacy
            await self.connection.send("server/discover", {}, False, until, deadline)
        if self.era == "legacy":
            await self.connection.send("ping", {}, False, until, deadline)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> CompleteResult:
        """completion/complete; the values are ``result.completion.values``."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        return complete_result(CompleteResult, await self.request("completion/complete", params))

    async def listen(self, **notifications: Any) -> AsyncIterator[dict[str, Any]]:
        """subscriptions/listen: yield notifications until the caller stops iterating
        (from a legacy server, in the same shape: ``LegacySession.listen``)."""
        if (
            self.era is None
            and await self.connection.settle(self._until(), self._deadline()) is None
        ):
            await self.discover()  # HTTP: the era must be known before the stream opens
        if self.era == "legacy":
            assert self.legacy is not None
            listening = self.legacy.listen(notifications, next(self.connection.ids))
            async with contextlib.aclosing(listening) as legacy:
                async for item in legacy:
                    if self.cache is not None:
                        self.cache.notified(self.origin, item)
                    yield item
            return
        params = {"notifications": notifications}
        message = self.connection.message("subscriptions/listen", params)
        headers = self.connection.headers("subscriptions/listen", params)
        stream = self.transport.stream(message, headers)
        try:
            async for item in stream:
                if "error" in item:
                    result_of(item)  # raises its RequestError
                if "method" not in item:
                    return
                if self.cache is not None:
                    self.cache.notified(self.origin, item)
                yield item
        finally:
            # Closing the iterator ends the stream now, and with it the subscription.
            await stream.aclose()


def _typed(method: str, outcome: Any) -> Any:
    """A raw result as ``method``'s result model; anything else (a task's handle) as it is."""
    if not isinstance(outcome, dict):
        return outcome
    return complete_result(RESULT_MODELS[method], outcome)
