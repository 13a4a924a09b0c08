"""The same flows as ``http_flow.py``, in process: each ASGI app called directly, no sockets.

Run from the repository root:

    .venv/bin/python bench/inprocess.py [--flows mrtr,echo] [--rounds 7] [--budget 0.3]

What HTTP adds (the parser, the event loop's socket work, uvicorn's protocol object) is
the same for every app and is left out here, so this isolates what each app does with
a request: ``bench/flows.py`` says what that is for snodo, the official SDK and the
floor. Each app gets the scope uvicorn would build (lower-case header names, the
``Host`` of a loopback server), its lifespan started first, and one body message;
every answer is checked before anything is timed. One more case, **snodo core**, is
``Server.handle`` on the decoded message plus ``jsonrpc.encode`` of the reply: the
transport-free core alone, with the same checks minus the HTTP headers.

Figures are CPU microseconds per request (``time.process_time``, garbage collector on,
one event loop, uvloop when installed), median over interleaved rounds, and each app's
multiple of the floor's. No timing assertions.
"""

import argparse
import asyncio
import platform
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from flows import (
    APPS,
    FLOWS,
    KINDS,
    PATH,
    REQUESTS_PER_FLOW,
    USER,
    AsgiApp,
    Message,
    call_body,
    encode,
    expected_text,
    headers_for,
    snodo_build,
    state_of,
)

Flow = Callable[[], Awaitable[bool]]


def scope_for(flow: str, length: int) -> dict[str, Any]:
    """The scope uvicorn builds for one POST of this flow (built once, copied per call)."""
    headers = [(b"host", b"127.0.0.1:8000")]
    for name, value in headers_for(flow).items():
        headers.append((name.lower().encode(), value.encode()))
    headers.append((b"content-length", str(length).encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def exchange(app: AsgiApp, scope: dict[str, Any], body: bytes) -> tuple[int, bytes]:
    """One request through the app as uvicorn would hand it over."""
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> Message:
        nonlocal sent
        if sent:
            await asyncio.Event().wait()  # no disconnect while the request runs
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(dict(scope), receive, send)
    return status, b"".join(chunks)


class Lifespan:
    """An app's lifespan, started and stopped as uvicorn would."""

    def __init__(self, app: AsgiApp) -> None:
        self.app = app
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.outbox: asyncio.Queue[Message] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.task = asyncio.ensure_future(
            self.app({"type": "lifespan", "state": {}}, self.inbox.get, self.outbox.put)
        )
        await self.inbox.put({"type": "lifespan.startup"})
        await self.outbox.get()

    async def stop(self) -> None:
        await self.inbox.put({"type": "lifespan.shutdown"})
        await self.outbox.get()
        if self.task is not None:
            await self.task


def asgi_flow(app: AsgiApp, flow: str) -> Flow:
    first = encode(call_body(1, flow))
    prefix, suffix = encode(call_body(2, flow, USER, "dark", "@STATE@")).split(b"@STATE@")
    expected = expected_text(flow).encode()
    scopes: dict[int, dict[str, Any]] = {}

    async def run() -> bool:
        scope = scopes.get(len(first)) or scopes.setdefault(len(first), scope_for(flow, len(first)))
        status, body = await exchange(app, scope, first)
        ok = status == 200
        if flow == "mrtr":
            state = state_of(body)
            second = prefix + state + suffix
            scope = scopes.get(len(second)) or scopes.setdefault(
                len(second), scope_for(flow, len(second))
            )
            status, body = await exchange(app, scope, second)
            ok = ok and status == 200 and bool(state)
        return ok and expected in body

    return run


def core_flow(flow: str) -> Flow:
    """snodo's Server.handle on decoded messages, and the reply encoded: no HTTP."""
    from snodo.core import jsonrpc  # noqa: PLC0415

    http_app: Any = APPS["snodo"]()
    server = http_app.server
    first = call_body(1, flow)
    expected = expected_text(flow).encode()

    async def run() -> bool:
        reply = await server.handle(first, transport="http")
        assert reply.response is not None
        body = jsonrpc.encode(reply.response)
        if flow == "mrtr":
            state = state_of(body).decode()
            reply = await server.handle(call_body(2, flow, USER, "dark", state), transport="http")
            assert reply.response is not None
            body = jsonrpc.encode(reply.response)
        return expected in body

    return run


async def per_request(run: Flow, flow: str, flows: int) -> float:
    started = time.process_time()
    for _ in range(flows):
        await run()
    return (time.process_time() - started) / (flows * REQUESTS_PER_FLOW[flow]) * 1e6


async def measure(flows: list[str], rounds: int, budget: float) -> None:
    lifespans = {kind: Lifespan(APPS[kind]()) for kind in KINDS}
    for lifespan in lifespans.values():
        await lifespan.start()
    cases: dict[tuple[str, str], Flow] = {}
    for flow in flows:
        for kind in KINDS:
            cases[(kind, flow)] = asgi_flow(lifespans[kind].app, flow)
        cases[("snodo core", flow)] = core_flow(flow)
    try:
        for (kind, flow), run in cases.items():
            if not await run():
                raise RuntimeError(f"{kind} answered the {flow} flow wrongly")
        sizes = {}
        for key, run in cases.items():
            estimate = min([await per_request(run, key[1], 50) for _ in range(3)])
            sizes[key] = max(50, int(budget * 1e6 / estimate / REQUESTS_PER_FLOW[key[1]]))
        samples: dict[tuple[str, str], list[float]] = {key: [] for key in cases}
        for _ in range(rounds):
            for key, run in cases.items():
                samples[key].append(await per_request(run, key[1], sizes[key]))
    finally:
        for lifespan in lifespans.values():
            await lifespan.stop()
    for flow in flows:
        print()
        print(f"flow {flow}: CPU µs per request, in process")
        floor = statistics.median(samples[("floor", flow)])
        for kind in (*KINDS, "snodo core"):
            values = samples[(kind, flow)]
            micros = statistics.median(values)
            print(
                f"  {kind:11} {micros:8.1f}  x{micros / floor:5.2f} floor"
                f"  (rounds {min(values):.1f}-{max(values):.1f})"
            )
    print()
    print("target: snodo (the ASGI app) <= 2x the floor in process")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", default=",".join(FLOWS))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per case and round")
    args = parser.parse_args()
    try:
        import uvloop  # noqa: PLC0415 - as in the HTTP servers

        loop_name = "uvloop"
        runner: Callable[[Coroutine[Any, Any, None]], None] = uvloop.run
    except ImportError:
        loop_name = "asyncio"
        runner = asyncio.run
    print(
        f"inprocess: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{loop_name}; {args.rounds} interleaved rounds of ~{args.budget:g} s per case; "
        f"snodo {snodo_build()}"
    )
    flows = [flow for flow in args.flows.split(",") if flow]
    runner(measure(flows, args.rounds, args.budget))


if __name__ == "__main__":
    main()
