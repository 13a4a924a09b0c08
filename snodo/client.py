"""A dual-era MCP client: the current revision with MRTR, legacy sessions as a fallback.

Every modern request carries ``_meta`` (version, client info, the capabilities of the
installed handlers: ``snodo.client_handlers``); over HTTP also the mirrored headers.
``call_tool``, ``read_resource`` and ``get_prompt`` run the MRTR loop
(``snodo.client_rounds``). An optional deadline bounds a whole call, and
``limits.request_timeout`` every request in it (``snodo.client_limits``). With
``manual=True`` the InputRequiredResult itself is returned, so a distributed client can
persist it and ``resume`` elsewhere. Whether a server is modern or legacy is decided
once (``snodo.era``); with a legacy server the same methods run over a
``LegacySession`` and return the same types (``snodo.client_results``). Whatever the
server does, a call ends within its bounds and raises only ``snodo.client_errors``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from snodo.client_errors import (
    ClientError,
    DeadlineExceeded,
    LimitExceeded,
    ProtocolViolation,
    RequestError,
    RequestTimeout,
    TooManyRounds,
    TransportError,
)
from snodo.client_handlers import InputHandlers
from snodo.client_limits import ClientLimits, within
from snodo.client_listings import every_page
from snodo.client_results import Flow, Handler, complete_result, result_of, validated
from snodo.client_rounds import FlowBounds, run_flow
from snodo.era import (
    VERDICTS,
    Era,
    EraChoice,
    ModernOnly,
    NotModern,
    UnsupportedServer,
    error_message,
    is_error_response,
    is_modern_error,
    named_versions,
    probe,
)
from snodo.errors import ErrorCode
from snodo.http_headers import outgoing_trace_context, request_headers, valid_header_params
from snodo.legacy_session import LegacySession
from snodo.transports.client import (
    ClientTransport,
    HttpRefused,
    HttpTransport,
    SessionTransport,
    StdioTransport,
)
from snodo_wire import (
    CompleteResult,
    DiscoverResult,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
)
from snodo_wire.protocol import (
    LATEST_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
)

__all__ = [
    "Client",
    "ClientError",
    "ClientLimits",
    "DeadlineExceeded",
    "Flow",
    "LimitExceeded",
    "ModernOnly",
    "ProtocolViolation",
    "RequestError",
    "RequestTimeout",
    "TooManyRounds",
    "TransportError",
    "UnsupportedServer",
    "complete_result",
]


class Client:
    """An MCP client for servers of either era, with one API.

    Install handlers for what the user can do (``elicitation``, ``url_elicitation``,
    ``sampling``, ``roots``); capabilities are declared from them. ``era`` is
    ``"auto"`` (probe once, then remember), ``"modern"`` or ``"legacy"``.
    ``probe_timeout`` bounds the stdio probe: a server silent that long is legacy.
    ``limits`` bounds what a server can make the client wait for or hold
    (``ClientLimits``; give ``Client.http``/``Client.stdio`` the same to bound the
    transport's reading too).
    """

    def __init__(
        self,
        transport: ClientTransport,
        *,
        name: str = "snodo-client",
        version: str = "0.1.0",
        protocol_version: str = LATEST_PROTOCOL_VERSION,
        era: EraChoice = "auto",
        probe_timeout: float = 5.0,
        elicitation: Handler | None = None,
        url_elicitation: Handler | None = None,
        sampling: Handler | None = None,
        sampling_tools: bool = False,
        sampling_context: bool = False,
        roots: Handler | None = None,
        max_rounds: int = 10,
        backoff: tuple[float, float] = (0.05, 2.0),
        deadline: float | None = None,
        on_notification: Callable[[dict[str, Any]], None] | None = None,
        limits: ClientLimits | None = None,
    ) -> None:
        if era not in ("auto", "modern", "legacy"):
            raise ValueError(f"era must be 'auto', 'modern' or 'legacy', not {era!r}")
        self.transport = transport
        self.info = {"name": name, "version": version}
        self.protocol_version = protocol_version
        self.era_choice: EraChoice = era
        self.probe_timeout = probe_timeout
        self.session_transport = transport if isinstance(transport, SessionTransport) else None
        if era == "legacy" and self.session_transport is None:
            raise ValueError(f"{type(transport).__name__} cannot hold a legacy session")
        # The verdict, None until known; in process, the transport reaches snodo's own
        # (modern) core.
        self.era: Era | None = (
            "modern" if era == "modern" or self.session_transport is None else None
        )
        self.legacy: LegacySession | None = None
        self.settling = asyncio.Lock()
        self.inputs = InputHandlers(
            elicitation=elicitation,
            url_elicitation=url_elicitation,
            sampling=sampling,
            sampling_tools=sampling_tools,
            sampling_context=sampling_context,
            roots=roots,
        )
        self.max_rounds = max_rounds
        self.limits = limits or ClientLimits()
        self.backoff = backoff
        self.deadline = deadline
        self.on_notification = on_notification or (lambda _: None)
        self.ids = itertools.count(1)
        self.tool_schemas: dict[str, Mapping[str, Any]] = {}

    @classmethod
    def http(cls, url: str, *, auth: Any = None, **options: Any) -> Client:
        """A client for the HTTP endpoint at ``url``; ``auth``: e.g. ``snodo.oauth.OAuth``."""
        return cls(HttpTransport(url, auth=auth, limits=options.get("limits")), **options)

    @classmethod
    def stdio(
        cls, argv: Sequence[str], *, env: Mapping[str, str] | None = None, **options: Any
    ) -> Client:
        """A client for a server it starts as a subprocess (``argv``), over stdio."""
        return cls(StdioTransport(argv, env=env, limits=options.get("limits")), **options)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """End the legacy session (waiting at most ``close_grace``), then the transport."""
        if self.legacy is not None:
            legacy, self.legacy = self.legacy, None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(legacy.close(), self.limits.close_grace)
        await self.transport.close()

    def capabilities(self) -> dict[str, Any]:
        """What the installed handlers let this client declare."""
        return self.inputs.capabilities()

    def _message(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        meta = {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: self.capabilities(),
            META_CLIENT_INFO: self.info,
            **{**outgoing_trace_context(), **dict(params.get("_meta") or {})},
        }
        return {
            "jsonrpc": "2.0",
            "id": next(self.ids),
            "method": method,
            "params": {**params, "_meta": meta},
        }

    def _headers(self, method: str, params: Mapping[str, Any]) -> dict[str, str]:
        schema = self.tool_schemas.get(params.get("name", "")) if method == "tools/call" else None
        return request_headers(method, params, self.protocol_version, schema)

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its raw result, in whichever era the server
        speaks; a modern server's -32022 is retried once with a version both speak.
        Bounded by ``deadline`` (from now) and ``limits.request_timeout``."""
        return await self._send(method, dict(params or {}), until=self._until())

    def _until(self) -> float | None:
        return None if self.deadline is None else time.monotonic() + self.deadline

    async def _send(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool = False,
        until: float | None = None,
    ) -> dict[str, Any]:
        if self.era != "modern" and await self._settle() == "legacy":
            return await self._legacy_call(method, params, modern_only, until)
        try:
            return await self._modern_request(method, params, until)
        except NotModern as refused:
            # A refusal no modern server sends: the server is legacy (or has become so).
            if self.era_choice == "modern" or self.session_transport is None:
                raise UnsupportedServer(
                    f"the server refused a {self.protocol_version} request "
                    f"(HTTP {refused.status}: {refused.detail}); "
                    "it may speak an earlier revision (era='auto' or 'legacy')"
                ) from None
            async with self.settling:
                if self.legacy is None:
                    await self._open_legacy()
            return await self._legacy_call(method, params, modern_only, until)

    async def _modern_request(
        self, method: str, params: dict[str, Any], until: float | None
    ) -> dict[str, Any]:
        for attempt in range(2):
            message = self._message(method, params)
            try:
                response = await within(
                    self.transport.request(
                        message, self._headers(method, params), self.on_notification
                    ),
                    self.limits,
                    until,
                    method,
                    self.deadline,
                )
            except HttpRefused as refused:
                modern = is_modern_error(refused.body)
                if not (modern or (self.era == "modern" and is_error_response(refused.body))):
                    if self.era == "modern" and refused.status >= 500:
                        raise  # a known modern server failing: no reason to change era
                    raise NotModern(refused.status, error_message(refused.body)) from None
                response = refused.body
            if self.era != "modern":
                self._verdict("modern")
            # basic/versioning.mdx: on -32022 pick a version both sides speak and retry.
            usable = [v for v in SUPPORTED_PROTOCOL_VERSIONS if v in named_versions(response)]
            error = response.get("error") or {}
            if (
                attempt == 0
                and usable
                and error.get("code") == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
            ):
                self.protocol_version = usable[0]
                continue
            return result_of(response)
        raise AssertionError("unreachable")

    # -- era -------------------------------------------------------------------------------

    def _verdict(self, era: Era) -> None:
        self.era = era
        origin = self.session_transport.origin if self.session_transport else None
        if origin is not None:
            VERDICTS[origin] = era

    async def _settle(self) -> Era | None:
        """The era, probing or opening the legacy session first when needed; None when
        the first request itself is the probe (HTTP)."""
        async with self.settling:
            transport = self.session_transport
            if self.era is not None or transport is None:
                return self.era
            if self.era_choice == "legacy":
                await self._open_legacy()
                return "legacy"
            cached = VERDICTS.get(transport.origin) if transport.origin else None
            if cached == "legacy":
                try:
                    await self._open_legacy()
                    return "legacy"
                except (UnsupportedServer, HttpRefused):
                    # The cached assumption failed: forget it and probe afresh.
                    del VERDICTS[transport.origin or ""]
            if transport.probe_with_discover:
                era, self.protocol_version = await probe(
                    transport,
                    self._message("server/discover", {}),
                    self.on_notification,
                    self.probe_timeout,
                    self.protocol_version,
                    self.era_choice,
                )
                if era == "legacy":
                    era = await self._open_legacy(probed=True)
                self.era = era
            return self.era

    async def _open_legacy(self, probed: bool = False) -> Era:
        """Open the legacy session. After a probe, a server that refuses ``initialize``
        naming a modern version we speak was modern after all (its answer came late)."""
        assert self.session_transport is not None
        session = LegacySession(
            self.session_transport,
            info=self.info,
            inputs=self.inputs,
            on_notification=self.on_notification,
            ids=self.ids,
            limits=self.limits,
        )
        try:
            await within(session.open(), self.limits, self._until(), "initialize", self.deadline)
        except UnsupportedServer as refused:
            usable = [v for v in SUPPORTED_PROTOCOL_VERSIONS if v in refused.supported]
            if not (probed and usable):
                raise
            self.protocol_version = usable[0]
            return "modern"
        self.legacy = session
        self._verdict("legacy")
        return "legacy"

    async def _legacy_call(
        self, method: str, params: dict[str, Any], modern_only: bool, until: float | None
    ) -> dict[str, Any]:
        assert self.legacy is not None
        if modern_only:
            raise ModernOnly(
                f"manual=True and resume need a {LATEST_PROTOCOL_VERSION} server; "
                f"this one speaks {self.legacy.version}"
            )
        call = self.legacy.call(method, params, self.on_notification)
        return await within(call, self.limits, until, method, self.deadline)

    # -- MRTR ----------------------------------------------------------------------------

    async def run(self, method: str, params: Mapping[str, Any], manual: bool = False) -> Any:
        """Send the request, answering input requests and retrying until complete."""
        params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        return await self._rounds(method, params, None, None, manual)

    async def resume(
        self, flow: Flow, responses: Mapping[str, Any] | None = None, manual: bool = False
    ) -> Any:
        """Continue a paused flow, here or in another process: answer its input requests
        (or send ``responses`` as the answers) and go on with the same bounds as ``run``."""
        raw = flow.result.model_dump(mode="json", by_alias=True)
        requests: dict[str, Any] = raw.get("inputRequests") or {}
        if responses is not None:
            answers: dict[str, Any] | None = dict(responses)
        else:
            answers = {key: await self.inputs.answer(request) for key, request in requests.items()}
        state = raw.get("requestState")
        return await self._rounds(
            flow.method,
            flow.params,
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
    ) -> Any:
        async def send(sent: dict[str, Any], until: float | None) -> dict[str, Any]:
            return await self._send(method, sent, manual or resuming, until)

        bounds = FlowBounds(self.max_rounds, self.backoff, self.deadline, self.limits)
        return await run_flow(send, self.inputs, bounds, method, params, responses, state, manual)

    # -- the methods -----------------------------------------------------------------------

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        manual: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        """The tool's CallToolResult (a Flow with ``manual=True`` when input is needed)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if meta:
            params["_meta"] = dict(meta)
        return await self.run("tools/call", params, manual)

    async def read_resource(self, uri: str, *, manual: bool = False) -> Any:
        """The ReadResourceResult (a Flow with ``manual=True`` when input is needed)."""
        return await self.run("resources/read", {"uri": uri}, manual)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, manual: bool = False
    ) -> Any:
        """The GetPromptResult (a Flow with ``manual=True`` when input is needed)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return await self.run("prompts/get", params, manual)

    async def discover(self) -> DiscoverResult:
        """server/discover; from a legacy server, the facts of its InitializeResult."""
        return complete_result(DiscoverResult, await self.request("server/discover"))

    async def ping(self) -> None:
        """ping: an empty result, or an error."""
        await self.request("ping")

    async def _all(self, method: str, key: str) -> list[dict[str, Any]]:
        until = self._until()
        send = functools.partial(self._send, method, until=until)
        return await every_page(send, method, key, self.limits)

    async def list_tools(self) -> list[Tool]:
        """Every tool, following cursors. Tools whose x-mcp-header use is invalid are
        dropped (basic/transports/streamable-http.mdx), and the rest remembered so that
        calls carry their Mcp-Param headers."""
        found = [(validated(Tool, t), t) for t in await self._all("tools/list", "tools")]
        kept = [(tool, raw) for tool, raw in found if valid_header_params(raw["inputSchema"])]
        self.tool_schemas = {tool.name: raw["inputSchema"] for tool, raw in kept}
        return [tool for tool, _ in kept]

    async def list_resources(self) -> list[Resource]:
        return [validated(Resource, r) for r in await self._all("resources/list", "resources")]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        found = await self._all("resources/templates/list", "resourceTemplates")
        return [validated(ResourceTemplate, t) for t in found]

    async def list_prompts(self) -> list[Prompt]:
        return [validated(Prompt, p) for p in await self._all("prompts/list", "prompts")]

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
        if self.era is None and await self._settle() is None:
            await self.discover()  # HTTP: the era must be known before the stream opens
        if self.era == "legacy":
            assert self.legacy is not None
            listening = self.legacy.listen(notifications, next(self.ids))
            async with contextlib.aclosing(listening) as legacy:
                async for item in legacy:
                    yield item
            return
        params = {"notifications": notifications}
        message = self._message("subscriptions/listen", params)
        stream = self.transport.stream(message, self._headers("subscriptions/listen", params))
        try:
            async for item in stream:
                if "error" in item:
                    result_of(item)  # raises its RequestError
                if "method" not in item:
                    return
                yield item
        finally:
            # Closing the iterator ends the stream now, and with it the subscription.
            await stream.aclose()
