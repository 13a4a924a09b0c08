"""A server whose features are another server's, reached through snodo's client.

``proxy(client)`` returns a ``Server`` whose ``backend`` is a ``Proxy``: every tool,
resource, template, prompt and completion request is sent to the backend with the
client (any transport, either era, with its auth), and the answer comes back through
the proxy's own core, which applies its checks, limits and hardening to the front
client and speaks whichever era the front speaks.

Questions cross eras both ways. A modern backend's ``InputRequiredResult`` goes to the
front as the proxy's own, its ``requestState`` sealed inside the proxy's state; the
front's retry brings it back to the backend with the answers. A legacy backend asks
inside its session while the call is open: the call stays open in this process
(``snodo.gateway.open_calls``), its questions go to a modern front as an
``InputRequiredResult`` whose sealed state names the call and this process, and the
retry answers them. Each front client's calls that may ask go to a legacy HTTP
backend in a session of that client's own (``snodo.gateway.backend_sessions``:
bounded, idle ones closed), so one client's unanswered questions never hold up
another's; a legacy stdio backend takes them one at a time, in the order they came.
A retry that reaches another process is carried to the one holding the call by the
relay (``snodo.gateway.relay``, over Redis) when there is one, and gets a clear error
when there is none. A legacy front gets either backend's
questions through the server's bridge, as requests in its own session.

Tool definitions and results cross revisions both ways: a front of SEP-3279's draft
gets the tools of a backend of an earlier revision with their ``outputVariants`` and
its calls' ``outputs`` as it asked for them, and the reverse
(``snodo.gateway.tool_translation``).

An extension the backend declares passes through only by its gateway half
(``snodo.gateway.passing``) given to ``proxy``. Errors keep
their code, message and data; the backend's list-changed and
resource-updated notifications reach the proxy's listen streams; what the backend
advertises decides what the proxy does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from types import MappingProxyType
from typing import Any, Final

from snodo.client import Client, ClientError, NotAuthorized, RequestError
from snodo.client.connection import Connection
from snodo.client.transports.stdio import StdioTransport
from snodo.core.admission import admit
from snodo.core.context import LOG_RANK, Context
from snodo.core.errors import InternalError, McpError
from snodo.core.result import InputRequired, input_required
from snodo.gateway.backend_sessions import ANONYMOUS, BackendSession, BackendSessions
from snodo.gateway.front import GATEWAYS, front_client
from snodo.gateway.open_calls import CURRENT, REFUSE, FlowElsewhere, OpenCall, OpenCalls
from snodo.gateway.passing import Passing, halves
from snodo.gateway.relay import Relay
from snodo.gateway.shaping import NOTHING_COMPLETED, Shape
from snodo.gateway.tool_translation import ToolTranslation
from snodo.revisions.authoring.protocol import (
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_SERVER_INFO,
)
from snodo.server import Server
from snodo.server.subscriptions import MAX_RESOURCE_SUBSCRIPTIONS
from snodo.server.tool_encoders import ToolEncoder, encoder_of

__all__ = ["BackendError", "Proxy", "proxy"]

log = logging.getLogger("snodo.gateway")

_RETRY_KEYS = ("inputResponses", "requestState")
_NO_DATA: Final[Mapping[str, Any]] = MappingProxyType({})
_ASKING: Final = frozenset({"tools/call", "resources/read", "prompts/get"})
"""The methods during which a backend may ask the front client something."""
_LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class BackendError(McpError):
    """The backend's JSON-RPC error, passed on with its code, message and data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message, data)
        self.code = code


PROXIES: weakref.WeakSet[Server] = weakref.WeakSet()
"""The servers ``proxy`` made: their backend is set when they start, and nothing may be
mounted in them (``snodo.gateway.mounting``)."""

Connect = Callable[..., Client]
"""Makes the backend's client from ``Client`` options: ``lambda **o: Client.http(url, **o)``."""


class Proxy:
    """The ``Backend`` of a proxy server: the client to the server behind it, made by
    ``connect`` with the handlers through which a legacy backend's questions reach the
    front client."""

    def __init__(
        self,
        connect: Connect,
        *,
        answer_timeout: float = 300.0,
        relay: str | None = None,
        calls_per_client: int = 16,
        backend_sessions: int = 32,
        backend_idle: float = 300.0,
        shape: Shape | None = None,
    ) -> None:
        self.shape = shape
        """What is taken of the backend, and how it is offered (``snodo.gateway.shaping``)."""
        self.connect = connect
        self.open_calls = OpenCalls(answer_timeout, per_client=calls_per_client)
        self.main = BackendSession(ANONYMOUS, False, time.monotonic)
        self.client = self._client_of(self.main)
        self.connection = self.client.connection
        """The client's way to the backend, which each forwarded request takes."""
        if isinstance(self.connection.transport, StdioTransport):
            self.main.turn = asyncio.Lock()  # one question stream for every call
        self.process = secrets.token_urlsafe(9)
        """Names this process in the state of a legacy backend's open calls."""
        self.session_bounds = (backend_sessions, backend_idle)
        self.sessions: BackendSessions | None = None
        """A legacy backend's session for each front client (``start`` makes them)."""
        self._sweeping: asyncio.Task[None] | None = None
        self.advertised: dict[str, Any] = {}
        self.relay_url = relay
        """Redis, for retries of a legacy backend's rounds that reach another worker."""
        self.relay: Relay | None = None
        self.label: str | None = None
        """The prefix a ``Composite`` mounted this proxy under, sealed into its rounds'
        state so that a retry finds its way back here."""
        self.served_uri: Callable[[str], str] | None = None
        """How the server serves a URI of this backend, when that is not as it is (a
        ``Composite``'s member: as the extensions' gateway halves name it)."""
        self.server: Server | None = None
        self._listening: asyncio.Task[None] | None = None
        self._sends = itertools.count(1)
        self._logging: dict[int, bool] = {}
        """The backend requests in flight, by number: whether each may cause log
        messages (a legacy backend logs as it likes; a modern one for a request that
        asked)."""
        self.tools = ToolTranslation()
        """The backend's tools as it declares them, and their translation between its
        revision and a front request's (``snodo.gateway.tool_translation``)."""

    # -- the client's handlers: a legacy backend's questions -------------------------

    def _client_of(self, session: BackendSession) -> Client:
        """A client of the backend whose questions are ``session``'s calls'."""
        client = self.connect(
            elicitation=self.asker("elicitation/create", session),
            url_elicitation=self.asker("elicitation/create", session),
            sampling=self.asker("sampling/createMessage", session),
            sampling_tools=True,
            sampling_context=True,
            roots=self.asker("roots/list", session),
            cache=False,
        )
        # Each open call's question is one request the legacy backend's session has
        # pending at the client: as many as the calls the proxy may hold.
        limits = client.connection.limits
        if limits.max_pending_server_requests < self.open_calls.limit:
            client.connection.limits = replace(
                limits, max_pending_server_requests=self.open_calls.limit
            )
        return client

    def asker(self, method: str, session: BackendSession | None = None) -> Any:
        """The client's handler for ``method`` asked by a legacy backend: the question
        goes to the open call it belongs to, which waits for the front's answer. Over
        stdio that is the call whose turn it is."""

        async def ask(params: dict[str, Any]) -> Any:
            opened: OpenCall | None
            if session is not None and session.turn is not None:
                opened = session.holder
            else:
                opened = self.open_calls.of_question()
            if opened is None or opened is REFUSE:
                log.warning("%s from the backend with no call to ask it in: refused", method)
                raise RuntimeError("the proxy cannot tell which call this question is for")
            return await opened.ask(method, {k: v for k, v in params.items() if k != "_meta"})

        return ask

    # -- Backend ------------------------------------------------------------------------

    def capabilities(self) -> Mapping[str, Any]:
        """What the backend advertised when the proxy started."""
        return self.advertised

    async def forward(
        self, ctx: Context, params: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        """The backend's answer to the front's request, or its questions as ours; with a
        ``shape``, the request and a list's answer as it says; tools in the front's
        revision's shape."""
        shape = self.shape
        method = ctx.request_method
        if shape is None and method not in ("tools/list", "tools/call"):
            return await self._forward(ctx, params)
        sent = params if shape is None else await shape.request(ctx, params)
        if sent is None:
            return dict(NOTHING_COMPLETED)
        front, backend = encoder_of(ctx.revision), self.tool_encoder()
        outcome: dict[str, Any] | InputRequired
        if method == "tools/call":
            name = sent.get("name")
            definition = await self._definition(ctx, name) if front is not backend else None
            sent, selection = self.tools.request(front, backend, sent, definition)
            outcome = await self._forward(ctx, sent)
            if isinstance(outcome, InputRequired):
                return outcome
            outcome = self.tools.result(front, backend, sent, definition, selection, outcome)
        else:
            outcome = await self._forward(ctx, sent)
            if isinstance(outcome, InputRequired):
                return outcome
            if method == "tools/list" and isinstance(outcome.get("tools"), list):
                outcome = {**outcome, "tools": self.tools.listed(front, backend, outcome["tools"])}
        return outcome if shape is None else shape.result(method, outcome)

    def tool_encoder(self) -> ToolEncoder:
        """The tool encoder of the revision the backend speaks."""
        connection = self.connection
        return encoder_of(connection.revisions.by_version.get(connection.protocol_version))

    async def _definition(self, ctx: Context, name: Any) -> dict[str, Any] | None:
        """The backend's definition of tool ``name`` (its own shape), its list read
        again when it is not known yet (once per list change); None: the backend lists
        no such tool to this gateway."""
        if not isinstance(name, str):
            return None
        known = self.tools.definitions.get(name)
        if known is None and not self.tools.read_whole:
            self.tools.remember(await self._pages([ctx], "tools/list", "tools"))
            self.tools.read_whole = True
            known = self.tools.definitions.get(name)
        return known

    async def _forward(
        self, ctx: Context, params: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        method = ctx.request_method
        if "inputResponses" in params or "requestState" in params:
            sent = {key: value for key, value in params.items() if key not in _RETRY_KEYS}
        else:  # a first round: what the front asked, as it asked it
            sent = dict(params)
        state_data = ctx.state_data
        data = state_data if isinstance(state_data, dict) else _NO_DATA
        if "flow" in data or (method in _ASKING and self.connection.era == "legacy"):
            return await self._legacy_call(ctx, sent, data)
        if "backend" in data:  # a modern backend's round, answered
            sent["inputResponses"] = dict(ctx.input_responses)
            if data["backend"] is not None:
                sent["requestState"] = data["backend"]
        token = CURRENT.set(REFUSE)  # a question now belongs to no call of a front's
        try:
            result = await self._send(method, sent, [ctx], passing=self._passes(ctx))
        finally:
            CURRENT.reset(token)
        if result.get("resultType") == "input_required":
            state = ctx.seal({"backend": result.get("requestState"), "via": self.label})
            return input_required(result.get("inputRequests") or None, state)
        return _as_ours(result)

    def _passes(self, ctx: Context) -> bool:
        """Whether the backend's large result members may reach the front as their bytes
        (``snodo.client.transports.passthrough``): when nothing on the way reads them, that
        is when the front's request is of the backend's revision, this proxy is not
        mounted in a composite (which rewrites what it passes on) and has no
        middleware. A legacy front's bridge reads them back (``jsonrpc.decode_passthrough``)."""
        server = self.server
        return (
            self.label is None
            and self.shape is None
            and server is not None
            and not server.middlewares
            and ctx.revision is not None
            and ctx.revision.version == self.connection.protocol_version
        )

    async def _legacy_call(
        self, ctx: Context, sent: dict[str, Any], data: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        if "flow" in data:
            if data.get("process") != self.process:
                return await self._elsewhere(ctx, data)
            opened = self.open_calls.get(data["flow"])
            opened.front[:] = [ctx]  # its notifications now go to this round's stream
            opened.answer(ctx.input_responses)
        else:
            front, owner = [ctx], front_client(ctx)
            opened = self.open_calls.start(
                lambda: self._in_session(owner, ctx.request_method, sent, front), owner
            )
            opened.front = front
        try:
            questions, result = await opened.next()
        except asyncio.CancelledError:  # the front gave up: so does the backend call
            await opened.cancel()
            raise
        if questions:
            state = ctx.seal({"flow": opened.flow, "process": self.process, "via": self.label})
            outcome = input_required(questions, state)
            try:  # a question the front cannot answer ends the backend call now
                admit(ctx.request_method, outcome, ctx.client_capabilities)
            except McpError:
                await opened.cancel()
                raise
            return outcome
        assert result is not None
        return _as_ours(result)

    async def _in_session(
        self, owner: str, method: str, sent: dict[str, Any], front: list[Context]
    ) -> dict[str, Any]:
        """An open call's request: in its front client's own session of a legacy HTTP
        backend; to a stdio one, in its turn."""
        if self.sessions is None:
            async with self.main.turn_of(CURRENT.get()):
                return await self._send(method, sent, front)
        async with self.sessions.using(owner) as session:
            assert session.client is not None
            return await self._send(method, sent, front, session.client.connection)

    async def _elsewhere(
        self, ctx: Context, data: Mapping[str, Any]
    ) -> dict[str, Any] | InputRequired:
        """A retry for a call another process holds: through the relay, if there is one."""
        if self.relay is None:
            raise FlowElsewhere(
                "This flow's backend call is open in another proxy process: without a "
                "relay (--notify redis://...) a legacy backend's questions must be "
                "answered at the process that asked them"
            )
        holder, flow = str(data.get("process")), str(data.get("flow"))
        replied = await self.relay.send(holder, flow, ctx.input_responses)
        if "questions" in replied:
            state = ctx.seal({"flow": flow, "process": holder, "via": self.label})
            return input_required(replied["questions"], state)
        if "result" in replied:
            result: dict[str, Any] = replied["result"]
            return result
        error = replied.get("error") or {}
        raise BackendError(
            int(error.get("code", -32603)), str(error.get("message")), error.get("data")
        )

    async def _answer_remote(self, flow: str, responses: Mapping[str, Any]) -> dict[str, Any]:
        """The relay's question for a call this process holds: its next step."""
        opened = self.open_calls.get(flow)
        opened.front[:] = []  # the front's stream is in another process now
        opened.answer(responses)
        questions, result = await opened.next()
        if questions:
            return {"questions": questions}
        assert result is not None
        return {"result": _as_ours(result)}

    async def _send(
        self,
        method: str,
        params: dict[str, Any],
        front: list[Context] | None = None,
        connection: Connection | None = None,
        passing: bool = False,
    ) -> dict[str, Any]:
        """``method`` at the backend, as the front's request (``front[0]``) asked it:
        with a progress token of its own (standing for the front's, which another
        front client may use too) and the front's log level, and, to a modern backend,
        its client's capabilities, so the backend asks only what the front client can
        answer. The backend's progress and log notifications go to the front's stream
        (``_heard``). ``passing``: a complete result's large members may come as their
        bytes, passed on as they are (``_passes``). ``connection``: a front client's
        own session (``_in_session``), else the proxy's."""
        notify = None
        number = next(self._sends)
        connection = connection or self.connection
        modern = connection.era == "modern"
        wants_logs = not modern
        if front:
            ctx = front[0]
            meta: dict[str, Any] = {}
            if ctx.progress_token is not None:
                meta["progressToken"] = f"{self.process}.{number}"
            if ctx.log_level is not None:
                meta[META_LOG_LEVEL] = ctx.log_level
                wants_logs = True
            if modern:
                meta[META_CLIENT_CAPABILITIES] = dict(ctx.client_capabilities)
            if meta:
                params = {**params, "_meta": meta}
            notify = partial(self._heard, front, number)
        self._logging[number] = wants_logs
        try:
            return await connection.send(method, params, False, None, None, notify, passing)
        except RequestError as exc:
            raise BackendError(exc.code, exc.message, exc.data) from None
        except NotAuthorized as exc:
            log.warning("the backend refused the proxy's credentials for %s: %s", method, exc)
            raise InternalError(refused_credentials(exc.status)) from None
        except ClientError as exc:
            log.warning("the backend did not answer %s: %s", method, exc)
            raise InternalError("The server behind this proxy did not answer") from None
        finally:
            del self._logging[number]

    def serves(self, method: str) -> bool:
        """Whether the backend advertised the feature ``method`` belongs to."""
        feature = method.split("/", 1)[0]
        feature = "completions" if feature == "completion" else feature
        return isinstance(self.advertised.get(feature), Mapping)

    async def listing(self, ctx: Context | None, method: str, key: str) -> list[Any]:
        """Every item of a backend list, its pages read through (at most 100 pages), as
        the front request ``ctx`` asks (None: as the proxy itself)."""
        items = await self._pages(None if ctx is None else [ctx], method, key)
        if method == "tools/list":  # in the front's revision's shape
            front = encoder_of(None if ctx is None else ctx.revision)
            items = self.tools.listed(front, self.tool_encoder(), items)
        return items if self.shape is None else self.shape.listed(method, items)

    async def _pages(self, front: list[Context] | None, method: str, key: str) -> list[Any]:
        """Every item of a backend list, as the backend lists it (at most 100 pages)."""
        items: list[Any] = []
        cursor = None
        for _ in range(100):
            params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
            result = await self._send(method, params, front)
            items += result.get(key) or []
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        return items

    # -- lifespan -----------------------------------------------------------------------

    async def start(self, server: Server) -> None:
        """Learn what the backend offers, and follow its list changes and the updates
        of the resources it lists (the first ``MAX_RESOURCE_SUBSCRIPTIONS``)."""
        self.server = server
        if self.relay_url is not None:
            # The holder may wait for its backend as long as a question waits for an answer.
            timeout = self.open_calls.answer_timeout + 30.0
            self.relay = Relay(self.relay_url, self.process, self._answer_remote, timeout=timeout)
            await self.relay.start()
        found = await self._send("server/discover", {})
        self.advertised = dict(found.get("capabilities") or {})
        stdio = self.main.turn is not None  # one process: its calls take turns instead
        if self.connection.era == "legacy" and self.connection.session_transport and not stdio:
            limit, idle = self.session_bounds
            self.sessions = BackendSessions(
                self._client_of, self.main, limit=limit, idle_timeout=idle
            )
            self._sweeping = asyncio.create_task(self.sessions.sweeping())
        wanted: dict[str, Any] = {
            f"{kind}ListChanged": True
            for kind in ("tools", "prompts", "resources")
            if isinstance(self.advertised.get(kind), Mapping)
        }
        resources = self.advertised.get("resources")
        if isinstance(resources, Mapping) and resources.get("subscribe"):
            # Updates of what the backend lists, for the proxy's own subscribers.
            listed = await self.listing(None, "resources/list", "resources")
            uris = [item["uri"] for item in listed if isinstance(item.get("uri"), str)]
            if uris:
                wanted["resourceSubscriptions"] = uris[:MAX_RESOURCE_SUBSCRIPTIONS]
        if wanted:
            self._listening = asyncio.create_task(self._listen(wanted))

    async def _listen(self, wanted: Mapping[str, Any]) -> None:
        try:
            async for note in self.client.listen(**wanted):
                self.pass_on(note)
        except ClientError as exc:
            log.warning("the backend's notification stream ended: %s", exc)

    def _heard(self, front: list[Context], number: int, note: dict[str, Any]) -> None:
        """A notification heard for backend request ``number``: progress and log
        messages to the front request's stream (the round open now), the rest as
        ``pass_on``.

        Progress carries the token this request was sent with, given back as the
        front's own; progress with any other token is not this front's. A log message
        names no request: over HTTP it came on this request's own stream, but a stdio
        backend has one stream for every request, and its log message goes to a front
        only when this request is the one in flight that may have caused it (else it
        is dropped, never guessed), at or above the level the front asked for."""
        method = note.get("method")
        if method not in ("notifications/progress", "notifications/message"):
            self.pass_on(note)
            return
        if not front:
            return
        ctx = front[0]
        raw = note.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if method == "notifications/progress":
            sent = f"{self.process}.{number}"
            if ctx.progress_token is None or params.get("progressToken") != sent:
                return
            ctx.notify(method, {**params, "progressToken": ctx.progress_token})
            return
        level = params.get("level")
        if ctx.log_level is None or LOG_RANK.get(str(level), -1) < LOG_RANK[ctx.log_level]:
            return
        if isinstance(self.client.connection.transport, StdioTransport):
            causes = [sent for sent, logs in self._logging.items() if logs]
            if causes != [number]:
                log.debug("a backend log message several requests may have caused: dropped")
                return
        ctx.notify(method, params)  # none to a front whose revision has no log messages

    def pass_on(self, note: Mapping[str, Any]) -> None:
        """A backend notification, told to the proxy's own listeners."""
        if self.server is None:
            return
        method = note.get("method")
        if method == "notifications/tools/list_changed":
            self.tools.forget()
        if method in _LIST_CHANGED:
            self.server.notify_list_changed(_LIST_CHANGED[method])  # type: ignore[arg-type]
        elif method == "notifications/resources/updated":
            uri = (note.get("params") or {}).get("uri")
            if isinstance(uri, str) and (self.shape is None or self.shape.takes(uri)):
                if self.served_uri is not None:  # as a mounting server serves it
                    uri = self.served_uri(uri)
                self.server.notify_resource_updated(uri)

    async def stop(self) -> None:
        """Stop following the backend, end its open calls, close the client."""
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(BaseException):
                await self._listening
        await self.open_calls.close()
        if self._sweeping is not None:
            self._sweeping.cancel()
            with contextlib.suppress(BaseException):
                await self._sweeping
        if self.sessions is not None:
            await self.sessions.close()
        if self.relay is not None:
            await self.relay.stop()
        await self.client.close()


def _as_ours(result: dict[str, Any]) -> dict[str, Any]:
    """The backend's complete result as the proxy's: its server info left behind. The
    result is the one the client just decoded for this request, so it is changed in
    place rather than copied (the server's stamp copies it once more anyway)."""
    result.pop("resultType", None)
    meta = result.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        del meta[META_SERVER_INFO]
        if not meta:
            del result["_meta"]
    return result


def refused_credentials(status: int) -> str:
    """What a front client is told of the backend's 401 or 403: which it was, never the
    challenge or body (they are about the proxy's credentials, not the client's)."""
    if status == 401:
        return (
            "The server behind this proxy refused the proxy's credentials (HTTP 401:"
            " none, or no longer valid)"
        )
    return (
        "The server behind this proxy refused this request with the proxy's credentials"
        f" (HTTP {status})"
    )


def proxy(
    connect: Connect,
    *,
    name: str = "snodo-proxy",
    version: str = "1.0.0",
    answer_timeout: float = 300.0,
    relay: str | None = None,
    calls_per_client: int = 16,
    backend_sessions: int = 32,
    backend_idle: float = 300.0,
    shape: Shape | None = None,
    passing: Iterable[Passing] = (),
    **server_options: Any,
) -> Server:
    """A ``Server`` serving the backend that ``connect(**client_options)`` reaches.

    ``connect`` makes the client, once per worker when the server starts:
    ``lambda **o: Client.http(url, **o)`` or
    ``lambda **o: Client.stdio(["python", "server.py"], **o)``. ``answer_timeout``
    bounds how long a legacy backend's question waits for the front client's retry;
    ``relay`` (a Redis URL) lets a retry that reaches another worker be answered by the
    one holding the backend call (``snodo.gateway.relay``); ``calls_per_client`` is how
    many of a legacy backend's calls waiting for answers one front client may hold
    (``snodo.gateway.open_calls``). A legacy backend is sent each front client's
    calls that may ask in a session of its own (over HTTP; a stdio backend takes them
    one at a time): at most ``backend_sessions`` at once, each closed after
    ``backend_idle`` seconds unused (``snodo.gateway.backend_sessions``). ``shape``
    filters, renames and reshapes what is taken of the backend (``snodo.gateway.shaping``).
    ``passing``: the gateway halves of the extensions the backend may declare that the
    proxy passes on (``snodo.gateway.passing``; none by default). ``server_options`` are
    ``Server``'s (limits, state keys, auth, middleware, ...).
    """
    chosen = halves(passing)

    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Proxy]:
        backend = Proxy(
            connect,
            answer_timeout=answer_timeout,
            relay=relay,
            calls_per_client=calls_per_client,
            backend_sessions=backend_sessions,
            backend_idle=backend_idle,
            shape=shape,
        )
        await backend.start(server)
        server.offering.serve_backend(backend)
        for half in chosen.values():  # the extensions passed as the backend declares them
            half.started(server, {"": backend})
        try:
            yield backend
        finally:
            server.offering.serve_backend(None)
            await backend.stop()

    lifespans = server_options.pop("lifespan", None)
    given = [] if lifespans is None else [lifespans] if callable(lifespans) else list(lifespans)
    server = Server(name, version, lifespan=[lifespan, *given], **server_options)
    PROXIES.add(server)
    GATEWAYS.add(server)
    return server
