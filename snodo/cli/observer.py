"""``snodo run``'s OpenTelemetry set-up, from the standard ``OTEL_*`` environment variables.

Off unless asked for: ``OTEL_TRACES_EXPORTER`` or ``OTEL_METRICS_EXPORTER`` naming an
exporter (``console``, ``otlp``, or any installed under the SDK's entry points), or a
request log. ``OTEL_SDK_DISABLED=true`` turns it all off. Exporting needs
``opentelemetry-sdk`` (and, for ``otlp``, ``opentelemetry-exporter-otlp``); the
exporters read their own variables (``OTEL_EXPORTER_OTLP_ENDPOINT``, ...), the resource
reads ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (the service is named after
the server otherwise), the propagators ``OTEL_PROPAGATORS``, and the metric reader
``OTEL_METRIC_EXPORT_INTERVAL``. The console exporters write to stderr: over stdio,
stdout is the protocol. Providers are installed globally, so a handler's own spans join
the same traces, and are flushed when the process exits.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

__all__ = ["REQUEST_LOG", "observer_from_environment"]

REQUEST_LOG = "snodo.requests"
"""The logger ``--request-log`` writes one JSON line per request to."""


def _names(environ: Mapping[str, str], variable: str) -> list[str]:
    value = environ.get(variable, "")
    return [name.strip() for name in value.split(",") if name.strip() not in ("", "none")]


def _exporter(group: str, name: str, console: str) -> Any:
    if name == "console":
        module, _, attribute = console.rpartition(".")
        return getattr(importlib.import_module(module), attribute)(out=sys.stderr)
    found = entry_points(group=group, name=name)
    if not found:
        raise SystemExit(f"snodo: no OpenTelemetry exporter named {name!r} is installed")
    return next(iter(found)).load()()


def observer_from_environment(
    service: str, request_log: bool = False, environ: Mapping[str, str] = os.environ
) -> Any:
    """An ``OtelObserver`` configured as the environment says, or None when it says nothing.

    Ends the command with one ``snodo:`` line when what it asks for is not installed.
    """
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    traces = _names(environ, "OTEL_TRACES_EXPORTER")
    measures = _names(environ, "OTEL_METRICS_EXPORTER")
    if not (traces or measures or request_log):
        return None
    try:
        from snodo.otel import OtelObserver
    except ModuleNotFoundError as exc:
        if "snodo[otel]" not in str(exc):
            raise
        raise SystemExit(
            "snodo: tracing, metrics and request logs need the snodo[otel] extra: "
            "pip install 'snodo[otel]'"
        ) from None
    logger = None
    if request_log:
        logger = logging.getLogger(REQUEST_LOG)
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    if traces or measures:
        try:
            _install(service, traces, measures)
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("opentelemetry"):
                raise
            raise SystemExit(
                "snodo: OTEL_*_EXPORTER needs the OpenTelemetry SDK: "
                "pip install opentelemetry-sdk (and opentelemetry-exporter-otlp for otlp)"
            ) from None
    return OtelObserver(request_log=logger)


def _install(service: str, traces: list[str], measures: list[str]) -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    resource = Resource.create()
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: service}))
    if traces:
        tracer_provider = TracerProvider(resource=resource)
        for name in traces:
            exporter = _exporter(
                "opentelemetry_traces_exporter",
                name,
                "opentelemetry.sdk.trace.export.ConsoleSpanExporter",
            )
            # The console is for watching: each span as it ends. Others go in batches.
            processor = SimpleSpanProcessor if name == "console" else BatchSpanProcessor
            tracer_provider.add_span_processor(processor(exporter))
        trace.set_tracer_provider(tracer_provider)
    if measures:
        readers = [
            PeriodicExportingMetricReader(
                _exporter(
                    "opentelemetry_metrics_exporter",
                    name,
                    "opentelemetry.sdk.metrics.export.ConsoleMetricExporter",
                )
            )
            for name in measures
        ]
        metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))
