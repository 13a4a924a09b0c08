"""The legacy era (2025-11-25) over loopback HTTP: snodo against the official SDK.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/legacy_flow.py [--concurrency 16] [--rounds 3] [--seconds 4]
                                          [--flows 20000] [--warmup 100] [--quick]

Each load connection first opens its own 2025-11-25 session: ``initialize`` (the answer
names the ``Mcp-Session-Id``), then ``notifications/initialized``; every later message
carries the session id and ``MCP-Protocol-Version: 2025-11-25``. Then, timed:

* **echo**: ``tools/call echo {"text": "hello"}`` within the session, answered with the
  text (snodo answers JSON; the official SDK, as configured by default, an SSE stream);
* **elicit**: ``tools/call theme {"user": "alice"}`` for a tool that asks the user once.
  The server sends ``elicitation/create`` on the call's SSE stream; the load generator
  answers it with a POST of its own (accept, ``{"theme": "dark"}``, 202) on a second
  connection, and the stream then carries the call's result ``alice: theme dark``.

Servers, each its own process, one uvicorn worker, ``--http httptools --loop uvloop``:

* **snodo**: ``HttpApp`` serving a ``Server`` with the legacy era on (its default). The
  ``theme`` tool is the MRTR handler of ``http_flow.py``, written once for the modern
  era (``snodo.asking.elicitation`` + sealed ``snodo.core.state``); the bridge serves it to the
  legacy session: round 1 answers input-required, the bridge asks the client over the
  stream, retries with the answer and the state, and the core checks both.
* **official**: ``mcp`` 2.3.0 ``MCPServer.streamable_http_app()`` in its stateful (session)
  mode with its defaults (SSE answers). Two elicitation tools: ``theme`` written for the
  legacy era (``await ctx.elicit(question, Model)``) and ``theme_resolved`` written
  once for both eras (``Annotated[Model, Resolve(fn)]`` with ``fn`` returning
  ``Elicit(question, Model)``, the SDK's counterpart of snodo's bridge); both are timed.

Before timing each server is checked: echo text, elicitation request shape (form mode,
the ``theme`` enum), the result for two different answers and for a decline, 404 for a
session it never made. During timing a flow is an error unless every status is the
expected one and the result carries the expected text.

The load generator is its own process (asyncio streams on uvloop, ``--concurrency``
sessions, one flow at a time each). Measurements take turns for ``--rounds`` rounds.
Reported: median over rounds of flows/s and server CPU µs per flow (utime+stime from
/proc/PID/stat of the server process around the timed window), p50/p99 latency, and
the ratios. No timing assertions.
"""

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import harness
from flows import QUESTION, SCHEMA, SECRET, THEMES, USER
from harness import Connection, HttpError, Response, encode, header_lines

LEGACY = "2025-11-25"
ECHO_TEXT = "hello"


@dataclass(frozen=True)
class Case:
    """One timed measurement: a flow against one server's tool."""

    label: str
    kind: str
    flow: str
    tool: str


CASES = (
    Case("snodo echo", "snodo", "echo", "echo"),
    Case("official echo", "official", "echo", "echo"),
    Case("snodo elicit (bridge)", "snodo", "elicit", "theme"),
    Case("official elicit (ctx.elicit)", "official", "elicit", "theme"),
    Case("official elicit (Resolve)", "official", "elicit", "theme_resolved"),
    Case("snodo echo, Redis store", "snodo-redis", "echo", "echo"),
    Case("snodo elicit (bridge), Redis store", "snodo-redis", "elicit", "theme"),
)
KINDS = ("snodo", "official", "snodo-redis")
REDIS_ENV = "SNODO_BENCH_REDIS"
"""The URL of the redis-server the orchestrator started, for the snodo-redis server."""


def final_text(user: str, theme: str) -> str:
    return f"{user}: theme {theme}"


# -- the servers ------------------------------------------------------------------------


def snodo_app(store: str | None = None) -> Any:
    from snodo.asking import elicitation  # noqa: PLC0415 - only this process needs it
    from snodo.core.context import Context  # noqa: PLC0415
    from snodo.core.result import InputRequired, input_required  # noqa: PLC0415
    from snodo.server import LegacyLimits, Server  # noqa: PLC0415
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    # The server's own keys: it opens the echoed state before the handler runs, and pins
    # the question asked beside what the handler sealed. ``store``: the sessions in Redis.
    legacy = LegacyLimits(store=store, max_sessions=100_000)
    server = Server("bench-legacy", "1.0.0", state_secret=SECRET, legacy=legacy)
    question = elicitation.form(QUESTION, SCHEMA)

    @server.tool
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    @server.tool
    def theme(user: str, ctx: Context) -> InputRequired | str:
        """Ask the user which theme they prefer."""
        answer = elicitation.response(ctx, "theme", question)
        if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
            return "Nothing changed."
        if not isinstance(answer, elicitation.Accepted):
            return input_required({"theme": question}, request_state=ctx.seal({"user": user}))
        return final_text(ctx.state_data["user"], str(answer.content["theme"]))

    return HttpApp(server, path=harness.PATH)


def official_app() -> Any:
    from mcp.server.mcpserver import Context, MCPServer  # noqa: PLC0415 - the bench extra
    from mcp.server.mcpserver.resolve import Elicit, Resolve  # noqa: PLC0415
    from pydantic import BaseModel, Field  # noqa: PLC0415

    class ThemeChoice(BaseModel):
        theme: Literal["light", "dark", "system"] = Field(title="Theme")

    server = MCPServer("bench-legacy", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    @server.tool()
    async def theme(user: str, ctx: Context) -> str:
        """Ask the user which theme they prefer."""
        answer = await ctx.elicit(QUESTION, ThemeChoice)
        if answer.action != "accept":
            return "Nothing changed."
        return final_text(user, answer.data.theme)

    def ask_theme() -> Elicit[ThemeChoice]:
        return Elicit(QUESTION, ThemeChoice)

    @server.tool()
    async def theme_resolved(user: str, choice: Annotated[ThemeChoice, Resolve(ask_theme)]) -> str:
        """Ask the user which theme they prefer (a resolver, for both eras)."""
        return final_text(user, choice.theme)

    return server.streamable_http_app(streamable_http_path=harness.PATH)


# -- the legacy exchange ------------------------------------------------------------------

BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def session_headers(session_id: str) -> bytes:
    return header_lines({**BASE, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id})


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return encode({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def _text(response: dict[str, Any] | None) -> str | None:
    result = (response or {}).get("result") or {}
    content = result.get("content") or [{}]
    text = content[0].get("text")
    return text if isinstance(text, str) else None


class Session:
    """One legacy session: a connection for calls, another for answering the server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.calls = Connection(port)
        self.answers = Connection(port)
        self.headers = b""
        self.next_id = 1
        self.asked: list[dict[str, Any]] = []

    async def open(self) -> "Session":
        await self.calls.open()
        await self.answers.open()
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "bench-load", "version": "1.0.0"},
            },
        }
        reply = await self.calls.exchange(b"POST", header_lines(BASE), encode(initialize))
        session_id = reply.headers.get("mcp-session-id")
        result = (reply.messages[-1] if reply.messages else {}).get("result") or {}
        if reply.status != 200 or not session_id or result.get("protocolVersion") != LEGACY:
            raise HttpError(f"initialize: {reply.status} {reply.headers} {reply.messages}")
        self.headers = session_headers(session_id)
        note = encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = await self.calls.exchange(b"POST", self.headers, note)
        if reply.status != 202:
            raise HttpError(f"notifications/initialized: {reply.status}")
        return self

    def close(self) -> None:
        self.calls.close()
        self.answers.close()

    async def echo(self) -> str | None:
        request_id, self.next_id = self.next_id, self.next_id + 1
        reply = await self.calls.exchange(
            b"POST", self.headers, call(request_id, "echo", {"text": ECHO_TEXT})
        )
        if reply.status != 200:
            return None
        return _text(next((m for m in reply.messages if m.get("id") == request_id), None))

    async def elicit(self, tool: str, answer: dict[str, Any]) -> str | None:
        """Call ``tool``, answer each server request on the stream with ``answer``."""
        request_id, self.next_id = self.next_id, self.next_id + 1
        self.calls.send(b"POST", self.headers, call(request_id, tool, {"user": USER}))
        status, headers = await self.calls.head()
        if status != 200:
            return None
        final: dict[str, Any] | None = None
        async for message in self.calls.events(headers):
            if message.get("method") == "elicitation/create" and "id" in message:
                self.asked.append(message)
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer}
                posted = await self.answers.exchange(b"POST", self.headers, encode(reply))
                if posted.status != 202:
                    return None
            elif message.get("id") == request_id:
                final = message
        return _text(final)

    async def flow(self, case: Case) -> bool:
        if case.flow == "echo":
            return await self.echo() == ECHO_TEXT
        accept = {"action": "accept", "content": {"theme": "dark"}}
        return await self.elicit(case.tool, accept) == final_text(USER, "dark")


# -- checks before timing -----------------------------------------------------------------


async def _validate(port: int, kind: str) -> int:
    session = await Session(port).open()
    try:
        checks = 1
        if await session.echo() != ECHO_TEXT:
            raise HttpError("echo: wrong text")
        checks += 1
        tools = ("theme",) if kind.startswith("snodo") else ("theme", "theme_resolved")
        for tool in tools:
            for chosen in ("dark", "light"):
                accept = {"action": "accept", "content": {"theme": chosen}}
                text = await session.elicit(tool, accept)
                if text != final_text(USER, chosen):
                    raise HttpError(f"{tool}: {chosen!r} answered {text!r}")
                checks += 1
            asked = session.asked[-1].get("params") or {}
            properties = (asked.get("requestedSchema") or {}).get("properties") or {}
            if (
                asked.get("message") != QUESTION
                or asked.get("mode", "form") != "form"
                or (properties.get("theme") or {}).get("enum") != THEMES
            ):
                raise HttpError(f"{tool}: wrong elicitation request {asked}")
            checks += 1
        declined = await session.elicit("theme", {"action": "decline"})
        if declined != "Nothing changed.":
            raise HttpError(f"decline answered {declined!r}")
        checks += 1
        stranger = Connection(port)
        await stranger.open()
        try:
            reply: Response = await stranger.exchange(
                b"POST", session_headers("no-such-session"), call(1, "echo", {"text": "x"})
            )
        finally:
            stranger.close()
        if reply.status != 404:
            raise HttpError(f"unknown session answered {reply.status}, not 404")
        return checks + 1
    finally:
        session.close()


# -- the load generator (its own process) ---------------------------------------------------


async def _worker(
    session: Session, case: Case, budget: list[int], deadline: float, latencies: list[float] | None
) -> int:
    errors = 0
    clock = time.perf_counter
    while budget[0] > 0 and clock() < deadline:
        budget[0] -= 1
        started = clock()
        ok = await session.flow(case)
        if latencies is not None:
            latencies.append(clock() - started)
        errors += not ok
    return errors


async def _load(args: argparse.Namespace) -> dict[str, Any]:
    case = next(case for case in CASES if case.label == args.case)
    sessions = [await Session(args.port).open() for _ in range(args.concurrency)]
    try:
        warm = [max(args.warmup, args.concurrency)]
        deadline = time.perf_counter() + 60
        errors = sum(
            await asyncio.gather(*(_worker(s, case, warm, deadline, None) for s in sessions))
        )
        latencies: list[float] = []
        budget = [args.flows]
        server_before = harness.proc_cpu_seconds(args.pid)
        client_before = time.process_time()
        started = time.perf_counter()
        deadline = started + args.seconds
        errors += sum(
            await asyncio.gather(*(_worker(s, case, budget, deadline, latencies) for s in sessions))
        )
        elapsed = time.perf_counter() - started
        server_cpu = harness.proc_cpu_seconds(args.pid) - server_before
        client_cpu = time.process_time() - client_before
    finally:
        for session in sessions:
            session.close()
    return {
        "flows": len(latencies),
        "elapsed": elapsed,
        "server_cpu": server_cpu,
        "client_cpu": client_cpu,
        "latencies": latencies,
        "errors": errors,
    }


def load_main(args: argparse.Namespace) -> None:
    result = harness.run_async(lambda: _load(args))
    with open(args.out, "w") as out:
        json.dump(result, out)


# -- orchestration --------------------------------------------------------------------------


def _measure(child: harness.Child, case: Case, args: argparse.Namespace) -> dict[str, Any]:
    options = [
        f"--case={case.label}",
        f"--port={child.port}",
        f"--pid={child.pid}",
        f"--concurrency={args.concurrency}",
        f"--flows={args.flows}",
        f"--seconds={args.seconds}",
        f"--warmup={args.warmup}",
    ]
    return harness.load(__file__, child, options, args.seconds + 180, case.label)


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _report(runs: dict[str, list[dict[str, Any]]]) -> None:
    rows: dict[str, dict[str, float]] = {}
    print()
    columns = ["flow", "flows/s", "p50 ms", "p99 ms", "server CPU µs/flow"]
    columns += ["client CPU µs/flow", "flows", "errors"]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for case in CASES:
        if case.label not in runs:
            continue
        measured = runs[case.label]
        latencies = [value for run in measured for value in run["latencies"]]
        row = {
            "rate": harness.median([run["flows"] / run["elapsed"] for run in measured]),
            "cpu": harness.median([run["server_cpu"] / run["flows"] * 1e6 for run in measured]),
            "client": harness.median([run["client_cpu"] / run["flows"] * 1e6 for run in measured]),
        }
        rows[case.label] = row
        print(
            f"| {case.label} | {row['rate']:.0f} | {_percentile(latencies, 0.5) * 1e3:.2f} | "
            f"{_percentile(latencies, 0.99) * 1e3:.2f} | {row['cpu']:.0f} | "
            f"{row['client']:.0f} | {sum(run['flows'] for run in measured)} | "
            f"{sum(run['errors'] for run in measured)} |"
        )
    print()
    for ours, theirs in (
        ("snodo echo", "official echo"),
        ("snodo elicit (bridge)", "official elicit (ctx.elicit)"),
        ("snodo elicit (bridge)", "official elicit (Resolve)"),
    ):
        cpu = harness.ratio(rows[theirs]["cpu"], rows[ours]["cpu"])
        rate = harness.ratio(rows[ours]["rate"], rows[theirs]["rate"])
        print(
            f"{theirs} / {ours}: server CPU per flow {cpu}; "
            f"snodo's flows/s {rate} of the official's"
        )
    for local in ("snodo echo", "snodo elicit (bridge)"):
        shared = f"{local}, Redis store"
        if shared in rows:
            cpu = harness.ratio(rows[shared]["cpu"], rows[local]["cpu"])
            rate = harness.ratio(rows[shared]["rate"], rows[local]["rate"])
            print(
                f"{shared} / in-process: server CPU per flow {cpu} "
                f"(redis-server's own CPU not included); flows/s {rate}"
            )


def orchestrate(args: argparse.Namespace) -> None:
    import uvicorn  # noqa: PLC0415

    print(
        f"legacy_flow: {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, uvicorn {uvicorn.__version__} --http httptools --loop uvloop, "
        "1 worker per server"
    )
    print(
        f"{args.concurrency} sessions; {args.rounds} rounds x (<= {args.flows} flows or "
        f"<= {args.seconds:g} s, after {args.warmup} warm-up flows) per flow, taking turns; "
        "medians over rounds"
    )
    children: list[harness.Child] = []
    redis = _redis_server()
    kinds = KINDS if redis is not None else tuple(k for k in KINDS if k != "snodo-redis")
    cases = tuple(case for case in CASES if case.kind in kinds)
    if redis is None:
        print("redis-server is not installed: the Redis store is not measured")
    with contextlib.ExitStack() as logs:
        try:
            for kind in kinds:
                log = logs.enter_context(tempfile.TemporaryFile("w+b"))
                children.append(harness.start(__file__, kind, log))
            by_kind = {child.kind: child for child in children}
            for child in children:
                try:
                    checks = harness.run_async(functools.partial(_validate, child.port, child.kind))
                except (HttpError, OSError, ValueError, asyncio.IncompleteReadError) as exc:
                    raise RuntimeError(
                        f"{child.kind} failed validation: {exc!r}\n{child.log_text()}"
                    ) from exc
                print(f"validated {child.kind:8} on 127.0.0.1:{child.port}: {checks} checks passed")
            runs: dict[str, list[dict[str, Any]]] = {case.label: [] for case in cases}
            for round_index in range(args.rounds):
                shift = round_index % len(cases)
                for case in cases[shift:] + cases[:shift]:
                    runs[case.label].append(_measure(by_kind[case.kind], case, args))
            _report(runs)
        finally:
            harness.stop([child.process for child in children])
            if redis is not None:
                harness.stop([redis])


def _redis_server() -> subprocess.Popen[bytes] | None:
    """A redis-server on a free loopback port, its URL in ``REDIS_ENV``; None without one."""
    import shutil  # noqa: PLC0415
    import socket  # noqa: PLC0415

    binary = shutil.which("redis-server")
    if binary is None:
        return None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            os.environ[REDIS_ENV] = f"redis://127.0.0.1:{port}/0"
            return process
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("redis-server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0, help="timed seconds, at most")
    parser.add_argument("--flows", type=int, default=20_000, help="timed flows, at most")
    parser.add_argument("--warmup", type=int, default=100, help="untimed flows first")
    parser.add_argument("--quick", action="store_true", help="a few flows: does it still run?")
    parser.add_argument("--serve", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.concurrency, args.rounds, args.seconds = 2, 1, 0.5
        args.flows, args.warmup = 20, 4
    if args.serve:
        apps = {
            "snodo": snodo_app,
            "official": official_app,
            "snodo-redis": lambda: snodo_app(os.environ[REDIS_ENV]),
        }
        harness.serve_uvicorn(apps[args.serve]())
    elif args.load:
        load_main(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
