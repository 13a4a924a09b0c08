"""How a Client's requests reach a server of either era: ``Connection``.

A ``Client`` decides what to ask (MRTR rounds, tasks, listings); its ``Connection``
decides how the asking is carried. Every modern request carries ``_meta`` (version,
client info, the capabilities the client declares, trace context); over HTTP also the
mirrored headers. Whether a server is modern or legacy is decided once (``snodo.client.era``):
over HTTP the first real request is the probe, over stdio ``server/discover``. With a
legacy server the same request runs over a ``LegacySession`` and comes back in the
same shape. A modern server's -32022 is retried once with a version both speak.
Every request is bounded by ``limits.request_timeout`` and, when given, by the
caller's ``until`` instant (``snodo.client.limits.within``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Mapping
from typing import Any

from snodo.client.era import (
    MODERN_PROTOCOL_VERSIONS,
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
from snodo.client.errors import DeadlineExceeded, NotAuthorized
from snodo.client.handlers import InputHandlers
from snodo.client.legacy_session import LegacySession
from snodo.client.legacy_tasks import call_as_task, task_tools, tools_take_tasks
from snodo.client.limits import ClientLimits, within
from snodo.client.results import fits_revision, result_of
from snodo.client.tool_outputs import asked, read_outputs
from snodo.client.transports import (
    ClientTransport,
    HttpRefused,
    PassingTransport,
    SessionTransport,
)
from snodo.core.errors import ErrorCode
from snodo.core.http_headers import outgoing_trace_context, request_headers
from snodo.revisions import REVISIONS, Revisions
from snodo.revisions.authoring.protocol import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
)

__all__ = ["Connection"]

Notify = Callable[[dict[str, Any]], None]


class Connection:
    """One client's way to its server: the transport, the era verdict, the legacy
    session when there is one, and the request ids."""

    def __init__(
        self,
        transport: ClientTransport,
        *,
        info: dict[str, str],
        protocol_version: str,
        era: EraChoice,
        probe_timeout: float,
        capabilities: Callable[[], dict[str, Any]],
        inputs: InputHandlers,
        on_notification: Notify,
        limits: ClientLimits,
        versions: tuple[str, ...] = MODERN_PROTOCOL_VERSIONS,
        revisions: Revisions = REVISIONS,
    ) -> None:
        self.transport = transport
        self.versions = versions
        """The modern versions this client speaks, newest first: it settles on the
        newest the server speaks too."""
        self.revisions = revisions
        """What the server's answers are checked with, by the version spoken."""
        self.info = info
        self.protocol_version = protocol_version
        self.era_choice: EraChoice = era
        self.probe_timeout = probe_timeout
        self.session_transport = transport if isinstance(transport, SessionTransport) else None
        self.passing_transport = transport if isinstance(transport, PassingTransport) else None
        if era == "legacy" and self.session_transport is None:
            raise ValueError(f"{type(transport).__name__} cannot hold a legacy session")
        # The verdict, None until known; in process, the transport reaches snodo's own
        # (modern) core.
        self.era: Era | None = (
            "modern" if era == "modern" or self.session_transport is None else None
        )
        self.legacy: LegacySession | None = None
        self.settling = asyncio.Lock()
        self.capabilities = capabilities
        self.inputs = inputs
        self.on_notification = on_notification
        self.limits = limits
        self.ids = itertools.count(1)
        self.tool_schemas: dict[str, Mapping[str, Any]] = {}
        """Input schemas of the listed tools, for their calls' Mcp-Param headers."""
        self.task_required: frozenset[str] | None = None
        """Tools a legacy server runs only as tasks (``legacy_tasks``); None until
        the tools are listed."""

    async def close(self) -> None:
        """End the legacy session (waiting at most ``close_grace``), then the transport."""
        if self.legacy is not None:
            legacy, self.legacy = self.legacy, None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(legacy.close(), self.limits.close_grace)
        await self.transport.close()

    def message(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The modern request for ``method``, with a fresh id and the ``_meta`` every
        modern request carries (the caller's own ``_meta`` keys win)."""
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

    def headers(self, method: str, params: Mapping[str, Any]) -> dict[str, str]:
        schema = self.tool_schemas.get(params.get("name", "")) if method == "tools/call" else None
        return request_headers(method, params, self.protocol_version, schema)

    async def send(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool = False,
        until: float | None = None,
        deadline: float | None = None,
        notify: Notify | None = None,
        passing: bool = False,
    ) -> dict[str, Any]:
        """The raw result of one request, in whichever era the server speaks; bounded
        by ``until`` (a ``time.monotonic()`` instant, ``deadline`` seconds from the
        call's start). ``modern_only``: a legacy server is ``ModernOnly``. ``notify``
        takes this request's notifications instead of ``on_notification``.
        ``passing``: a modern server's complete result may keep its large members as
        their bytes (``PassingTransport``), for a proxy to pass on."""
        if self.era != "modern" and await self.settle(until, deadline) == "legacy":
            return await self._legacy_call(method, params, modern_only, until, deadline, notify)
        try:
            return await self._modern_request(method, params, until, deadline, notify, passing)
        except NotModern as refused:
            # A refusal no modern server sends: the server is legacy (or has become so).
            if self.era_choice == "modern" or self.session_transport is None:
                raise UnsupportedServer(
                    f"the server refused a {self.protocol_version} request "
                    f"(HTTP {refused.status}: {refused.detail}); "
                    "it may speak an earlier revision (era='auto' or 'legacy')",
                    status=refused.status,
                    spoken=self.versions,
                ) from None
            async with self.settling:
                if self.legacy is None:
                    await self._open_legacy(until, deadline)
            return await self._legacy_call(method, params, modern_only, until, deadline, notify)

    async def _modern_request(
        self,
        method: str,
        params: dict[str, Any],
        until: float | None,
        deadline: float | None,
        notify: Notify | None = None,
        passing: bool = False,
    ) -> dict[str, Any]:
        for attempt in range(2):
            request = self.transport.request
            if passing and self.passing_transport is not None:
                revision = self.revisions.by_version.get(self.protocol_version)
                if revision is not None and revision.authoring:  # unchecked (fits_revision)
                    request = self.passing_transport.request_passing
            sent = asked(self.revisions.by_version.get(self.protocol_version), method, params)
            message = self.message(method, sent)
            try:
                response = await within(
                    request(message, self.headers(method, sent), notify or self.on_notification),
                    self.limits,
                    until,
                    method,
                    deadline,
                )
            except NotAuthorized:
                raise  # credentials, not the era: the other era would be refused too
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
            usable = [v for v in self.versions if v in named_versions(response)]
            error = response.get("error") or {}
            if (
                attempt == 0
                and usable
                and error.get("code") == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
            ):
                self.protocol_version = usable[0]
                continue
            revision = self.revisions.by_version.get(self.protocol_version)
            checked = fits_revision(revision, method, result_of(response))
            return read_outputs(revision, method, checked)
        raise AssertionError("unreachable")

    # -- era -------------------------------------------------------------------------------

    def _verdict(self, era: Era) -> None:
        self.era = era
        origin = self.session_transport.origin if self.session_transport else None
        if origin is not None:
            VERDICTS[origin] = era

    async def settle(self, until: float | None = None, deadline: float | None = None) -> Era | None:
        """The era, probing or opening the legacy session first when needed; None when
        the first request itself is the probe (HTTP). The probe and the ``initialize``
        after it count against the call's deadline (``until``, from ``deadline`` s):
        past it, ``DeadlineExceeded``."""
        async with self.settling:
            transport = self.session_transport
            if self.era is not None or transport is None:
                return self.era
            if self.era_choice == "legacy":
                await self._open_legacy(until, deadline)
                return "legacy"
            cached = VERDICTS.get(transport.origin) if transport.origin else None
            if cached == "legacy":
                try:
                    await self._open_legacy(until, deadline)
                    return "legacy"
                except (UnsupportedServer, HttpRefused):
                    # The cached assumption failed: forget it and probe afresh.
                    del VERDICTS[transport.origin or ""]
            if transport.probe_with_discover:
                timeout = self.probe_timeout
                if until is not None:
                    timeout = min(timeout, until - time.monotonic())
                era, self.protocol_version = await probe(
                    transport,
                    self.message("server/discover", {}),
                    self.on_notification,
                    timeout,
                    self.protocol_version,
                    self.era_choice,
                    self.versions,
                )
                if until is not None and time.monotonic() >= until:
                    raise DeadlineExceeded(f"server/discover did not complete within {deadline} s")
                if era == "legacy":
                    era = await self._open_legacy(until, deadline, probed=True)
                self.era = era
            return self.era

    async def _open_legacy(
        self, until: float | None, deadline: float | None, probed: bool = False
    ) -> Era:
        """Open the legacy session, by ``until`` (from ``deadline`` s). After a probe, a
        server that refuses ``initialize`` naming a modern version we speak was modern
        after all (its answer came late)."""
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
            await within(session.open(), self.limits, until, "initialize", deadline)
        except UnsupportedServer as refused:
            usable = [v for v in self.versions if v in refused.supported]
            if not (probed and usable):
                raise
            self.protocol_version = usable[0]
            return "modern"
        self.legacy = session
        self._verdict("legacy")
        return "legacy"

    async def _legacy_call(
        self,
        method: str,
        params: dict[str, Any],
        modern_only: bool,
        until: float | None,
        deadline: float | None,
        notify: Notify | None = None,
    ) -> dict[str, Any]:
        assert self.legacy is not None
        params = asked(None, method, params)  # no legacy revision takes requestedOutputs
        if modern_only:
            raise ModernOnly(
                f"manual=True and resume need a {self.versions[0]} server; "
                f"this one speaks {self.legacy.version}"
            )
        if method == "tools/call" and "task" not in params and self._offers_tool_tasks():

            async def send(method: str, params: dict[str, Any]) -> dict[str, Any]:
                return await self._legacy_call(method, params, False, until, deadline, notify)

            if self.task_required is None:
                self.task_required = await task_tools(send)
            if params.get("name") in self.task_required:
                return await call_as_task(send, params, until)
        call = self.legacy.call(method, params, notify or self.on_notification)
        return await within(call, self.limits, until, method, deadline)

    def _offers_tool_tasks(self) -> bool:
        return self.legacy is not None and tools_take_tasks(self.legacy.server.get("capabilities"))
