"""Trace context leaves with the client's requests; with nothing observing, nothing is imported."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import set_span_in_context

from snodo.client import Client
from snodo.client.transports import MemoryTransport
from snodo.server import Server
from tests.observe.otel_support import answer, observed
from tests.support.paths import ROOT
from tests.support.wire import request


class Recording(MemoryTransport):
    """A memory transport that keeps what the client sent."""

    def __init__(self, server: Server) -> None:
        super().__init__(server)
        self.sent: list[tuple[dict[str, Any], dict[str, str]]] = []

    async def request(self, message: Any, headers: Any, on_notification: Any) -> dict[str, Any]:
        self.sent.append((message, dict(headers)))
        return await super().request(message, headers, on_notification)


def test_the_client_sends_the_current_trace_context_in_meta_and_headers() -> None:
    seen = observed()
    server = Server("test-server", "1.0.0", observer=seen.observer)

    @server.tool
    def ping() -> str:
        """Answers."""
        return "pong"

    transport = Recording(server)
    outer = TracerProvider().get_tracer("tests").start_span("caller")
    context = outer.get_span_context()
    expected = f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"

    async def run() -> None:
        async with Client(transport) as client:
            from opentelemetry import context as otel_context

            token = otel_context.attach(set_span_in_context(outer))
            try:
                await client.call_tool("ping", {})
            finally:
                otel_context.detach(token)
            await client.call_tool("ping", {})  # outside the span: nothing to send

    asyncio.run(run())
    (inside, inside_headers), (outside, outside_headers) = transport.sent
    assert inside["params"]["_meta"]["traceparent"] == expected
    assert inside_headers["traceparent"] == expected
    assert "traceparent" not in outside["params"]["_meta"]
    assert "traceparent" not in outside_headers
    server_span = seen.spans()[0]
    assert server_span.parent is not None
    assert (server_span.parent.trace_id, server_span.parent.span_id) == (
        context.trace_id,
        context.span_id,
    )


def test_an_unobserved_server_and_client_never_import_opentelemetry() -> None:
    program = textwrap.dedent(
        """
        import asyncio, sys
        from snodo.asking import elicitation
        from snodo.client import Client
        from snodo.core.result import input_required
        from snodo.server import Server
        from snodo.client.transports import MemoryTransport

        server = Server("s", "1", state_secret=bytes(32))
        CITY = elicitation.form("City?", {"type": "object", "properties": {}})

        @server.tool
        def ask(ctx) -> object:
            "Asks once."
            if ctx.state_data is None:
                return input_required({"c": CITY}, request_state=ctx.seal({"n": 1}))
            return "done"

        async def main():
            client = Client(MemoryTransport(server), elicitation=lambda p: {"action": "decline"})
            async with client:
                print(await client.call_tool("ask", {}))

        asyncio.run(main())
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_quiet_server_answers_byte_for_byte_as_an_observed_one() -> None:
    quiet = Server("test-server", "1.0.0")
    loud = Server("test-server", "1.0.0", observer=observed().observer)

    def echo(a: int) -> str:
        """Echo."""
        return str(a)

    for server in (quiet, loud):
        server.tool(echo)
    message = request("tools/call", {"name": "echo", "arguments": {"a": 1}})
    assert answer(quiet, message) == answer(loud, message)
