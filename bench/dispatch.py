"""In-process dispatch of one tools/call, request bytes to response bytes: snodo and the SDK.

Run from the repository root (no network, no sockets):

    .venv/bin/python bench/dispatch.py [--rounds 7] [--quick]

The call is ``tools/call add {"a": 2, "b": 3}`` with the 2026-07-28 ``_meta`` envelope;
every server answers ``complete`` with one text block ``"5"``. Timed, side by side in one
process and one event loop (uvloop when installed), in interleaved rounds:

* **snodo**: ``await server.handle(request_bytes)`` then ``snodo.core.jsonrpc.encode`` of the
  response: envelope, method table, ``_meta`` and version checks, params against the
  generated model, tool arguments against the tool's schema, the call, ``resultType``
  and ``serverInfo``;
* **snodo observed** (only with the ``otel`` extra): the same server with an
  ``OtelObserver``, once over the OpenTelemetry API's own no-op providers (the extra
  installed, no SDK configured) and once over SDK providers with no exporter or reader
  (spans and measurements made, then dropped). Without an observer (the first case)
  nothing of OpenTelemetry is imported, installed or not, and ``snodo run`` sets one only
  when an ``OTEL_*_EXPORTER`` variable or ``--request-log`` asks for it;
* **official lowlevel**: ``mcp`` 2.3.0's lowest-level server path for a 2026-07-28 request,
  the one its single-exchange HTTP entry (``mcp/server/_streamable_http_modern.py``,
  JSON mode) runs without the HTTP parts: ``json.loads``, ``JSONRPCRequest`` validation,
  ``classify_inbound_request`` (``_meta`` envelope and version), a born-ready
  ``Connection.from_envelope``, ``serve_one`` (the ``ServerRunner`` kernel: params
  validation, middleware, handler, result serialisation and ``serverInfo``) with a
  minimal ``DispatchContext``, then ``JSONRPCResponse`` dumped with ``json.dumps``. The
  server is a lowlevel ``Server(on_call_tool=...)`` whose handler adds the two integers
  from ``params.arguments`` (no schema: the lowlevel tier validates no arguments). It is
  timed as shipped, with the ``OpenTelemetryMiddleware`` the SDK installs on every
  server, and again with ``server.middleware`` emptied (the SDK's documented opt-out);
* **official MCPServer**: the SDK's decorator tier (``@mcp.tool()`` on the same function,
  arguments validated through its generated pydantic model, and its default
  request-state boundary middleware) through the same kernel path, which is the tier
  comparable with snodo's ``@server.tool``.

Every path is checked first: the response must be JSON-RPC id 1 with ``resultType``
``complete`` and text ``"5"``. Figures are the median over rounds of the CPU time of
this process per call (``time.process_time``: being descheduled on a shared machine
does not count), garbage collector on, as in a server. No timing assertions.
"""

import argparse
import asyncio
import json
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any

from snodo.core import jsonrpc
from snodo.server import Server

REQUEST = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "name": "add",
            "arguments": {"a": 2, "b": 3},
        },
    },
    separators=(",", ":"),
).encode()

Call = Callable[[bytes], Awaitable[bytes]]


def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


def snodo_case() -> Call:
    server = Server("bench", "1.0.0")
    server.tool(add)

    async def call(body: bytes) -> bytes:
        reply = await server.handle(body)
        assert reply.response is not None
        return jsonrpc.encode(reply.response)

    return call


def otel_cases() -> dict[str, Call]:
    """snodo with an OtelObserver, or nothing when the otel extra (and SDK) is missing."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415 - optional extra
        from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415

        from snodo.otel import OtelObserver  # noqa: PLC0415
    except ImportError:
        return {}

    def observed(observer: OtelObserver) -> Call:
        server = Server("bench", "1.0.0", observer=observer)
        server.tool(add)

        async def call(body: bytes) -> bytes:
            reply = await server.handle(body)
            assert reply.response is not None
            return jsonrpc.encode(reply.response)

        return call

    sdk = OtelObserver(tracer_provider=TracerProvider(), meter_provider=MeterProvider())
    return {
        "snodo observed, OpenTelemetry API only (no-op)": observed(OtelObserver()),
        "snodo observed, SDK providers, no exporter": observed(sdk),
    }


def official_cases() -> dict[str, Call]:
    """The official SDK's paths, or nothing when the bench extra is not installed."""
    try:
        import anyio  # noqa: PLC0415 - the SDK and its dependencies are the optional bench extra
        import mcp_types as types  # noqa: PLC0415
        from mcp.server.connection import Connection  # noqa: PLC0415
        from mcp.server.lowlevel.server import Server as LowServer  # noqa: PLC0415
        from mcp.server.mcpserver import MCPServer  # noqa: PLC0415
        from mcp.server.runner import serve_one  # noqa: PLC0415
        from mcp.shared.exceptions import NoBackChannelError  # noqa: PLC0415
        from mcp.shared.inbound import InboundLadderRejection, classify_inbound_request  # noqa: PLC0415
        from mcp.shared.transport_context import TransportContext  # noqa: PLC0415
    except ImportError:
        return {}

    @dataclass
    class DispatchContext:
        """The least a DispatchContext can be: no back-channel, notifications dropped."""

        request_id: Any
        transport: TransportContext = field(
            default_factory=lambda: TransportContext(kind="bench", can_send_request=False)
        )
        message_metadata: Any = None
        can_send_request: bool = False
        cancel_requested: anyio.Event = field(default_factory=anyio.Event)

        async def send_raw_request(
            self, method: str, params: Mapping[str, Any] | None, opts: Any = None
        ) -> dict[str, Any]:
            raise NoBackChannelError(method)

        async def notify(
            self, method: str, params: Mapping[str, Any] | None, opts: Any = None
        ) -> None:
            return None

        async def progress(
            self, progress: float, total: float | None = None, message: str | None = None
        ) -> None:
            return None

    def kernel_path(server: Any) -> Call:
        async def call(body: bytes) -> bytes:
            decoded = json.loads(body)
            request = types.JSONRPCRequest.model_validate(decoded)
            verdict = classify_inbound_request(decoded)
            if isinstance(verdict, InboundLadderRejection):
                raise RuntimeError(verdict.message)
            connection = Connection.from_envelope(
                verdict.protocol_version, verdict.client_info, verdict.client_capabilities
            )
            result = await serve_one(
                server,
                DispatchContext(request.id),
                request.method,
                request.params,
                connection=connection,
                lifespan_state={},
            )
            response = types.JSONRPCResponse(jsonrpc="2.0", id=request.id, result=result)
            dumped = response.model_dump(mode="json", by_alias=True, exclude_none=True)
            return json.dumps(dumped, separators=(",", ":")).encode()

        return call

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        text = add(arguments["a"], arguments["b"])
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    shipped = LowServer("bench", version="1.0.0", on_call_tool=on_call_tool)
    bare = LowServer("bench", version="1.0.0", on_call_tool=on_call_tool)
    bare.middleware.clear()
    decorated: Any = MCPServer("bench", version="1.0.0")
    decorated.tool()(add)
    return {
        "official lowlevel, as shipped (OpenTelemetry middleware)": kernel_path(shipped),
        "official lowlevel, server.middleware emptied": kernel_path(bare),
        "official MCPServer @tool, same path": kernel_path(decorated._lowlevel_server),
    }


async def check(label: str, call: Call) -> None:
    reply = json.loads(await call(REQUEST))
    result = reply.get("result") or {}
    content = result.get("content") or [{}]
    if (
        reply.get("id") != 1
        or result.get("resultType") != "complete"
        or content[0].get("text") != "5"
    ):
        raise RuntimeError(f"{label} answered wrongly: {reply}")


async def per_call(call: Call, iterations: int) -> float:
    """CPU microseconds per call over a loop of ``iterations`` calls."""
    started = time.process_time()
    for _ in range(iterations):
        await call(REQUEST)
    return (time.process_time() - started) / iterations * 1e6


async def run(rounds: int, budget: float) -> None:
    cases: dict[str, Call] = {"snodo Server.handle + jsonrpc.encode": snodo_case()}
    cases.update(otel_cases())
    cases.update(official_cases())
    for label, call in cases.items():
        await check(label, call)
    # Size each loop to about ``budget`` seconds from a warm-up estimate.
    iterations: dict[str, int] = {}
    for label, call in cases.items():
        estimate = min([await per_call(call, 200) for _ in range(3)])
        iterations[label] = max(200, int(budget * 1e6 / estimate))
    samples: dict[str, list[float]] = {label: [] for label in cases}
    for _ in range(rounds):
        for label, call in cases.items():
            samples[label].append(await per_call(call, iterations[label]))
    medians = {label: statistics.median(values) for label, values in samples.items()}
    ours = medians["snodo Server.handle + jsonrpc.encode"]
    width = max(len(label) for label in cases)
    for label, micros in medians.items():
        spread = f"{min(samples[label]):.1f}-{max(samples[label]):.1f}"
        ratio = "" if micros is ours else f"  x{micros / ours:.2f} snodo's time"
        print(f"{label:{width}}  {micros:7.1f} µs/call  (rounds {spread}){ratio}")
    print()
    if len(cases) == 1:
        print("official SDK (mcp) not installed: no side-by-side figure")
        return
    for label, micros in medians.items():
        if label.startswith("official"):
            print(f"official/snodo time per call: x{micros / ours:.2f}  [{label}]")
    print("target: the official lowest-level path takes >= 3x snodo's time per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 short rounds")
    args = parser.parse_args()
    rounds, budget = (3, 0.05) if args.quick else (args.rounds, 0.25)
    try:
        import uvloop  # noqa: PLC0415 - optional, as in the HTTP servers

        loop_name = f"uvloop {version('uvloop')}"
        runner: Callable[[Coroutine[Any, Any, None]], None] = uvloop.run
    except ImportError:
        loop_name = "asyncio"
        runner = asyncio.run
    print(
        f"dispatch: {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, {loop_name}; "
        'tools/call add {"a": 2, "b": 3} -> "5", request bytes to response bytes, in process'
    )
    print(f"{rounds} rounds of ~{budget:g} s per case, interleaved; median CPU µs per call")
    runner(run(rounds, budget))


if __name__ == "__main__":
    main()
