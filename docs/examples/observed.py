"""A server observed through OpenTelemetry, in a program that sets up the SDK itself:
python observed.py (needs snodo[otel] and opentelemetry-sdk)

Spans go to an in-memory exporter here, to print their names; a real program would
add an OTLP or console exporter to the same provider instead.
"""

import asyncio

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from snodo import Client, Server
from snodo.client.transports import MemoryTransport
from snodo.otel import OtelObserver

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))

# Without tracer_provider= the observer uses the global providers.
server = Server("clock", "1.0.0", observer=OtelObserver(tracer_provider=provider))


@server.tool
def now() -> str:
    """The time, roughly."""
    return "teatime"


async def main() -> None:
    async with Client(MemoryTransport(server)) as client:
        await client.call_tool("now")
    print([span.name for span in exporter.get_finished_spans()])


if __name__ == "__main__":
    asyncio.run(main())
