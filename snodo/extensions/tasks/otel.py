"""Task runs as spans, and task metrics, for ``snodo.otel.OtelObserver`` (the extra
``snodo[otel]``): the tasks extension's observability half, the ``TaskObserver`` that
``task_observer`` gives the engine for such an observer.

Theory of operation
-------------------
A task outlives the request that created it and may be moved by requests that other
workers answer, so it cannot be a request's span. Its run is one INTERNAL span
``"task {tool}"`` in the worker that owns it (the one whose process runs the work),
opened by ``TaskRuns.task_run`` around the work, under the creating request's span (the
context the run was started in), and current while the work runs.

What the owner sees on the way becomes the span's events: each status it sets
(``task_changed`` while its run's span is current) and each resumption after an input
round (``task_resumed``). A tasks/update or tasks/cancel request, on any worker, leaves the mark
of its own span (``span_mark``) in the task's record; the owner links its span to each
mark the next time it reads the record.

The metrics count what each worker changes: ``snodo.tasks`` the live tasks by status
(``working``, ``input_required``), ``snodo.tasks.ended`` and ``snodo.task.duration``
the tasks that reached a final status. Only their sum over workers is the whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Final

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace import StatusCode
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError(
        "snodo.extensions.tasks.otel needs the snodo[otel] extra: pip install 'snodo[otel]'"
    ) from exc

from snodo.otel.marks import DURATION_BUCKETS, linked_span, span_mark

if TYPE_CHECKING:
    from snodo.extensions.tasks.record import TaskView
    from snodo.otel import OtelObserver

__all__ = ["TaskRuns"]

LIVE: Final = frozenset({"working", "input_required"})
"""The statuses ``snodo.tasks`` counts: an ended task leaves its store at TTL expiry
with no worker told, so a gauge of ended tasks could only grow."""
STATUS: Final = "snodo.task.status"


class TaskRuns:
    """The task runs this process owns, and the task metrics it records, through
    ``observer``'s tracer, meter and request log."""

    def __init__(self, observer: OtelObserver) -> None:
        self.tracer = observer.tracer
        self.log = observer.request_log
        meter = observer.meter
        self.live = meter.create_up_down_counter(
            "snodo.tasks", unit="{task}", description="Live tasks by status."
        )
        self.ended = meter.create_counter(
            "snodo.tasks.ended", unit="{task}", description="Tasks ended, by final status."
        )
        self.duration = meter.create_histogram(
            "snodo.task.duration",
            unit="s",
            description="Time from a task's creation to its end, by final status.",
            explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
        )
        self.runs: dict[str, _Run] = {}
        """By task id."""

    def task_changed(self, record: TaskView, previous: str | None) -> None:
        """This worker created the task (``previous`` None) or changed its status."""
        status = record.status
        if previous != status:
            if previous in LIVE:
                self.live.add(-1, {STATUS: previous})
            if status in LIVE:
                self.live.add(1, {STATUS: status})
            else:
                self.ended.add(1, {STATUS: status})
                elapsed = max(record.updated_at - record.created_at, 0.0)
                self.duration.record(elapsed, {STATUS: status})
        run = self.runs.get(record.task_id)
        # Only the owner's own changes are events on its run: a tasks/update answered in
        # this process is seen by the run when it resumes, as in any other worker.
        if run is None or trace.get_current_span() is not run.span:
            return
        run.status = status
        event: dict[str, str | int] = {STATUS: status}
        if status == "input_required" and previous != "input_required":
            run.rounds += 1
            event["snodo.task.input_round"] = run.rounds
        if status == "failed" and record.error is not None:
            run.error = str(record.error.get("code"))
        run.span.add_event(STATUS, event)
        run.link(record)

    def task_resumed(self, record: TaskView) -> None:
        """The owner took an input round's answers."""
        run = self.runs.get(record.task_id)
        if run is None:
            return
        run.status = record.status
        run.span.add_event(STATUS, {STATUS: record.status})
        run.link(record)

    def task_run(self, task_id: str, tool: str) -> AbstractContextManager[None]:
        """The INTERNAL span ``"task {tool}"`` of the owner's run, current inside."""
        return self._run(task_id, tool)

    def task_mark(self) -> str | None:
        """The current span as a mark (trace id and span id), or None when not recording."""
        return span_mark(trace.get_current_span()) or None

    @contextmanager
    def _run(self, task_id: str, tool: str) -> Iterator[None]:
        attributes = {"snodo.task.id": task_id, "gen_ai.tool.name": tool}
        span = self.tracer.start_span(f"task {tool}", attributes=attributes)
        run = _Run(span)
        self.runs[task_id] = run
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        finally:
            del self.runs[task_id]
            span.set_attribute(STATUS, run.status)
            span.set_attribute("snodo.task.input_rounds", run.rounds)
            if run.error is not None:
                span.set_attribute("error.type", run.error)
                span.set_status(StatusCode.ERROR, f"JSON-RPC error {run.error}")
            span.end()
            otel_context.detach(token)
            if self.log is not None:
                self.log.info(run.log_line(attributes))


class _Run:
    """One task's span in its owner, and what it learnt on the way."""

    __slots__ = ("error", "linked", "rounds", "span", "started", "status")

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self.started = time.perf_counter()
        self.status = "working"
        self.rounds = 0
        self.error: str | None = None
        self.linked = 0
        """How many of the record's trace links are links of the span already."""

    def link(self, record: TaskView) -> None:
        """Link the span to the requests that moved the task since it last looked."""
        for mark in record.trace_links[self.linked :]:
            target = linked_span(mark)
            if target is not None:
                self.span.add_link(target)
        self.linked = max(self.linked, len(record.trace_links))

    def log_line(self, attributes: dict[str, str]) -> str:
        """The run as one JSON object, as ``OtelObserver``'s request log writes them."""
        context = self.span.get_span_context()
        line: dict[str, Any] = {
            "time": round(time.time(), 6),
            "event": "mcp.task",
            **attributes,
            STATUS: self.status,
            "snodo.task.input_rounds": self.rounds,
            "duration_ms": round((time.perf_counter() - self.started) * 1000, 3),
        }
        if context.is_valid:
            line["trace_id"] = f"{context.trace_id:032x}"
            line["span_id"] = f"{context.span_id:016x}"
        if self.error is not None:
            line["error.type"] = self.error
        return json.dumps(line, separators=(",", ":"), ensure_ascii=False)
