"""Traces, metrics and request logs on the OpenTelemetry API (extra ``snodo[otel]``).

Theory of operation
-------------------
``OtelObserver`` is a ``snodo.core.observe.Observer``: give it to ``Server(observer=...)``
(``snodo run`` does, from the standard ``OTEL_*`` variables: ``snodo.cli.observer``). It
uses only the OpenTelemetry API; what happens to spans and measurements is the
application's choice of SDK and exporters, and with none installed the API's no-op
providers drop them.

* One SERVER span per request, named ``"{method} {tool, prompt or URI}"`` as the
  OpenTelemetry conventions for MCP name them, child of the trace context the client
  sent: ``traceparent``/``tracestate``/``baggage`` in ``params._meta`` (basic/index.mdx
  reserves those keys), else the same HTTP headers, else the current context (a span
  of the same trace that is already current stays the parent: a legacy request's
  bridged rounds are its children). The handler runs inside the span, so
  its own spans are children. Attributes: method, request id, protocol version and era,
  transport, tool/prompt/resource, the JSON-RPC error code (``error.type``), the
  result type and ``isError``.
* A flow of MRTR rounds is linked through the sealed state: when a round seals state,
  its mark ``"<flow id>.<round>.<trace id><span id>"`` is sealed beside the handler's
  data; the retry that brings it back gets a link to that span, the same
  ``snodo.flow.id`` and the next round number. The client reads the mark only where it
  can read the state (signed tokens), and cannot change it (it is under the MAC).
* A refused state records its reason (``malformed``, ``unknown_key``, ``forged``: a
  forgery or a state bound to another request, which the MAC cannot tell apart,
  ``expired``, ``replayed``, ``reusable``, ``one_time``) on the span, the metric and
  the log; the client still gets the one "Invalid request state".
* The tasks extension adds its own (``snodo.extensions.tasks.otel``, through the
  observer's ``tracer``, ``meter`` and ``request_log``): a task's run is one INTERNAL
  span ``"task {tool}"`` in the worker that owns it, linked to the requests that moved
  it (``marks``: a span kept as a mark, and the link back to it). The requests about a
  task (the creating call, tasks/*) carry ``snodo.task.id``.
* Metrics: ``mcp.server.operation.duration`` (s), ``snodo.server.requests``,
  ``snodo.flow.input_rounds`` (how many times a flow asked before it ended),
  ``snodo.state.refused``, the gauges ``snodo.listen.streams``,
  ``snodo.legacy.sessions`` and ``snodo.tasks`` (live tasks by status: ``working`` and
  ``input_required``), and for ended tasks ``snodo.tasks.ended`` and
  ``snodo.task.duration`` (s), by final status. Task metrics count in the worker that
  made the change, so only their sum over workers is the whole. Methods outside the
  method table are recorded as ``_OTHER``, so a client cannot grow the metrics'
  cardinality.
* ``request_log``: a logger that gets one JSON object per request at INFO, with the
  trace, span, flow and task ids, and one per task run when it ends; never arguments,
  answers or state.

The package implements the core's ``snodo.core.observe.Observer``; it may import the
core only, and nothing but the command line (``snodo.cli.observer``) and the extensions'
observability halves import it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Final

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, propagate, trace
    from opentelemetry.trace import SpanContext, SpanKind, StatusCode
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError(
        "snodo.otel needs the snodo[otel] extra: pip install 'snodo[otel]'"
    ) from exc

from snodo.core.observe import Attributes, Observation
from snodo.otel.marks import DURATION_BUCKETS, linked_span, span_mark
from snodo.revisions import REVISIONS
from snodo.revisions.authoring.protocol import META_PROTOCOL_VERSION
from snodo.revisions.authoring.tables import METHODS

if TYPE_CHECKING:
    from snodo.core.jsonrpc import Request

__all__ = ["OtelObserver"]

try:
    _VERSION = version("snodo")
except PackageNotFoundError:  # a checkout on sys.path, not installed
    _VERSION = "0"

_TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")
_NETWORK: Final = {"stdio": "pipe", "http": "tcp"}
_ROUND_BUCKETS: Final = (0, 1, 2, 3, 4, 5, 7, 10)
"""Input rounds; a client gives up after 10 by default (snodo.client.Client)."""


def _carrier(params: Any, headers: Mapping[str, str]) -> Mapping[str, str]:
    """Where the client's trace context is: ``_meta`` when it has one, else the headers."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("traceparent"), str):
        return {key: meta[key] for key in _TRACE_KEYS if isinstance(meta.get(key), str)}
    return headers


def _target(method: str, params: Any) -> tuple[str, dict[str, str]]:
    """The span name's target and the attributes naming it."""
    if not isinstance(params, dict):
        return "", {}
    name = params.get("name")
    if method == "tools/call" and isinstance(name, str):
        return name, {"gen_ai.tool.name": name, "gen_ai.operation.name": "execute_tool"}
    if method == "prompts/get" and isinstance(name, str):
        return name, {"gen_ai.prompt.name": name}
    uri = params.get("uri")
    if method == "resources/read" and isinstance(uri, str):
        return uri, {"mcp.resource.uri": uri}
    return "", {}


def _parse_mark(mark: str) -> tuple[str, int, SpanContext | None] | None:
    """Flow id, round and link target of a mark this observer sealed; None otherwise."""
    parts = mark.split(".")
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit():
        return None
    link = None
    if len(parts[2]) == 48:
        link = linked_span(parts[2])
        if link is None:
            return None
    return parts[0], int(parts[1]), link


class OtelObserver:
    """Spans, metrics and JSON-line request logs through the OpenTelemetry API.

    ``tracer_provider`` and ``meter_provider`` default to the global ones (configured
    by the application, or by ``snodo run``); ``request_log`` is a logger for one JSON
    line per request, or None.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
        request_log: logging.Logger | None = None,
    ) -> None:
        self.tracer = trace.get_tracer("snodo", _VERSION, tracer_provider=tracer_provider)
        self.meter = meter = metrics.get_meter("snodo", _VERSION, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="Time to answer a request, from parsed to answered.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.requests = meter.create_counter(
            "snodo.server.requests", unit="{request}", description="Requests by method and outcome."
        )
        self.input_rounds = meter.create_histogram(
            "snodo.flow.input_rounds",
            unit="{round}",
            description="Times a flow asked for input before it ended.",
            explicit_bucket_boundaries_advisory=list(_ROUND_BUCKETS),
        )
        self.refused = meter.create_counter(
            "snodo.state.refused", unit="{state}", description="Echoed states refused, by reason."
        )
        self.streams = meter.create_up_down_counter(
            "snodo.listen.streams",
            unit="{stream}",
            description="Open listen streams.",
        )
        self.sessions = meter.create_up_down_counter(
            "snodo.legacy.sessions", unit="{session}", description="Open legacy-era sessions."
        )
        self.request_log = request_log

    def request(
        self, request: Request, era: str, transport: str, headers: Mapping[str, str]
    ) -> Observation:
        """Start the request's SERVER span (child of the client's trace context) and timer."""
        return _Request(self, request, era, transport, headers)

    def listen_streams(self, delta: int) -> None:
        """Move the ``snodo.listen.streams`` gauge by ``delta``."""
        self.streams.add(delta)

    def legacy_sessions(self, delta: int) -> None:
        """Move the ``snodo.legacy.sessions`` gauge by ``delta``."""
        self.sessions.add(delta)

    def phase(self, name: str, attributes: Attributes) -> AbstractContextManager[None]:
        """A span ``name`` with ``attributes``, current inside: a child of the request's."""
        return self._phase(name, attributes)

    @contextmanager
    def _phase(self, name: str, attributes: Attributes) -> Iterator[None]:
        with self.tracer.start_as_current_span(name, attributes=dict(attributes)):
            yield


_LEGACY_METHODS: Final = frozenset(m for r in REVISIONS.served("legacy") for m in r.methods)
"""The requests a legacy session's revisions define (a legacy request names no version)."""


def _known(era: str, version: object) -> tuple[Any, frozenset[str] | None]:
    """The methods a request's revision defines (its metric label, else ``_OTHER``), and
    those that may ask for input (None: the authoring revision's table says)."""
    if era == "legacy":
        return _LEGACY_METHODS, None
    revision = REVISIONS.by_version.get(version) if isinstance(version, str) else None
    if revision is None:  # a version no revision speaks: refused, labelled as before
        return METHODS, None
    return revision.methods, revision.input_required_methods


class _Request:
    """One request's span, timing and flow, from start to finish."""

    __slots__ = (
        "attributes",
        "flow_id",
        "input_capable",
        "method",
        "observer",
        "refused",
        "request_id",
        "round",
        "span",
        "started",
        "token",
    )

    def __init__(
        self,
        observer: OtelObserver,
        request: Request,
        era: str,
        transport: str,
        headers: Mapping[str, str],
    ) -> None:
        self.observer = observer
        self.started = time.perf_counter()
        params = request.params
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        known, asking = _known(era, version)
        self.method = request.method if request.method in known else "_OTHER"
        self.input_capable = (
            self.method in asking
            if asking is not None
            else self.method in METHODS and METHODS[self.method].input_required
        )
        self.request_id = request.id
        self.round = 1
        self.flow_id: str | None = None
        self.refused: str | None = None
        target, attributes = _target(request.method, params)
        attributes["mcp.method.name"] = request.method
        attributes["jsonrpc.request.id"] = str(request.id)
        attributes["snodo.client.era"] = era
        if isinstance(version, str):
            attributes["mcp.protocol.version"] = version
        if transport in _NETWORK:
            attributes["network.transport"] = _NETWORK[transport]
        task_id = params.get("taskId") if isinstance(params, dict) else None
        if isinstance(task_id, str) and request.method.startswith("tasks/"):
            attributes["snodo.task.id"] = task_id
        self.attributes = attributes
        current = otel_context.get_current()
        parent = propagate.extract(_carrier(params, headers), context=current)
        inner = trace.get_current_span(current).get_span_context()
        if (
            inner.is_valid
            and inner.trace_id == trace.get_current_span(parent).get_span_context().trace_id
        ):
            # Already inside a span of that trace (a bridged round inside its legacy
            # request, an HTTP server span): nest under it rather than beside it.
            parent = current
        name = f"{request.method} {target}" if target else request.method
        self.span = observer.tracer.start_span(
            name, parent, kind=SpanKind.SERVER, attributes=attributes
        )
        self.token = otel_context.attach(trace.set_span_in_context(self.span, parent))

    def state_accepted(self, flow: str | None) -> None:
        parsed = _parse_mark(flow) if flow is not None else None
        if parsed is None:
            return
        self.flow_id, previous, link = parsed
        self.round = previous + 1
        if link is not None:
            self.span.add_link(link, {"snodo.flow.round": previous})
        self.span.set_attribute("snodo.flow.id", self.flow_id)
        self.span.set_attribute("snodo.flow.round", self.round)

    def state_refused(self, reason: str) -> None:
        self.refused = reason
        self.span.set_attribute("snodo.state.refused_reason", reason)
        self.observer.refused.add(1, {"snodo.state.refused_reason": reason})

    def flow_mark(self) -> str | None:
        if self.flow_id is None:
            self.flow_id = os.urandom(8).hex()
            self.span.set_attribute("snodo.flow.id", self.flow_id)
            self.span.set_attribute("snodo.flow.round", self.round)
        return f"{self.flow_id}.{self.round}.{span_mark(self.span)}"

    def cancelled(self) -> None:
        self.finish(None, cancelled=True)

    def finish(self, response: Mapping[str, Any] | None, cancelled: bool = False) -> None:
        elapsed = time.perf_counter() - self.started
        span = self.span
        error = response.get("error") if response is not None else None
        result = response.get("result") if response is not None else None
        code: int | None = None
        result_type: str | None = None
        is_error = False
        if cancelled:
            outcome = "cancelled"
            span.set_attribute("error.type", "cancelled")
            span.set_status(StatusCode.ERROR, "cancelled")
        elif isinstance(error, dict):
            code = error.get("code")
            outcome = "error"
            span.set_attribute("error.type", str(code))
            span.set_attribute("rpc.response.status_code", str(code))
            span.set_status(StatusCode.ERROR, f"JSON-RPC error {code}")
        elif isinstance(result, dict):
            result_type = result.get("resultType", "complete")  # legacy results have none
            is_error = result.get("isError") is True
            outcome = "tool_error" if is_error else str(result_type)
            span.set_attribute("snodo.result.type", str(result_type))
            task_id = result.get("taskId")
            if result_type == "task" and isinstance(task_id, str):
                span.set_attribute("snodo.task.id", task_id)
                self.attributes["snodo.task.id"] = task_id  # for the log line
            if is_error:
                span.set_attribute("snodo.result.is_error", True)
                span.set_attribute("error.type", "tool_error")
        else:
            outcome = "stream"
        measured = {"mcp.method.name": self.method, "snodo.outcome": outcome}
        if code is not None:
            measured["error.type"] = str(code)
        observer = self.observer
        observer.duration.record(elapsed, measured)
        observer.requests.add(1, measured)
        if self.input_capable and self.refused is None and outcome != "input_required":
            observer.input_rounds.record(
                self.round - 1, {"mcp.method.name": self.method, "snodo.outcome": outcome}
            )
        span.end()
        otel_context.detach(self.token)
        if observer.request_log is not None:
            self._log(observer.request_log, elapsed, outcome, code, result_type, is_error)

    def _log(
        self,
        logger: logging.Logger,
        elapsed: float,
        outcome: str,
        code: int | None,
        result_type: str | None,
        is_error: bool,
    ) -> None:
        context = self.span.get_span_context()
        line: dict[str, Any] = {
            "time": round(time.time(), 6),
            "event": "mcp.request",
            **self.attributes,
            "snodo.outcome": outcome,
            "duration_ms": round(elapsed * 1000, 3),
        }
        if context.is_valid:
            line["trace_id"] = f"{context.trace_id:032x}"
            line["span_id"] = f"{context.span_id:016x}"
        if code is not None:
            line["error.type"] = str(code)
        if result_type is not None:
            line["snodo.result.type"] = result_type
        if is_error:
            line["snodo.result.is_error"] = True
        if self.flow_id is not None:
            line["snodo.flow.id"] = self.flow_id
            line["snodo.flow.round"] = self.round
        if self.refused is not None:
            line["snodo.state.refused_reason"] = self.refused
        logger.info(json.dumps(line, separators=(",", ":"), ensure_ascii=False))
