"""A server observed into the OpenTelemetry SDK's in-memory exporter and reader."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from snodo.otel import OtelObserver
from snodo.server import Server

SECRET = bytes(range(32))


@dataclass
class Observed:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    observer: OtelObserver

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def points(self, name: str) -> list[tuple[dict[str, Any], Any]]:
        """(attributes, data point) of every point of the metric ``name``."""
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found += [(dict(p.attributes or {}), p) for p in metric.data.data_points]
        return found


def observed(**options: Any) -> Observed:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    observer = OtelObserver(tracer_provider=tracer_provider, meter_provider=meters, **options)
    return Observed(exporter, reader, tracer_provider, observer)


def answer(server: Server, message: dict[str, Any], **options: Any) -> dict[str, Any]:
    reply = asyncio.run(server.handle(json.dumps(message).encode(), **options))
    assert reply.response is not None
    return reply.response
