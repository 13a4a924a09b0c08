"""A span as a mark kept elsewhere, and the link back to it.

A flow's sealed state keeps the mark of the round that sealed it, and a task's record
the marks of the requests that moved it: the span that reads the mark later, in any
process, links to the span it names.
"""

from __future__ import annotations

from typing import Final

from opentelemetry import trace
from opentelemetry.trace import SpanContext, TraceFlags

__all__ = ["DURATION_BUCKETS", "linked_span", "span_mark"]

DURATION_BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
"""Seconds; the boundaries the OpenTelemetry conventions advise for MCP durations."""


def span_mark(span: trace.Span) -> str:
    """The span as 48 hex digits (trace id, span id); empty when it records nothing."""
    context = span.get_span_context()
    if not (context.is_valid and span.is_recording()):
        return ""
    return f"{context.trace_id:032x}{context.span_id:016x}"


def linked_span(mark: str) -> SpanContext | None:
    """The span a ``span_mark`` names, to link to; None for anything else."""
    if len(mark) != 48:
        return None
    try:
        trace_id, span_id = int(mark[:32], 16), int(mark[32:], 16)
    except ValueError:
        return None
    return SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(1))
