"""What each authoring feature of snodo's server costs: server CPU per request over HTTP.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/features.py [--cases baseline,inline,...] [--rounds 5]
                                       [--seconds 3] [--concurrency 16] [--quick]

Each case is its own snodo server process serving one tool, one uvicorn worker on a
free 127.0.0.1 port, ``--http httptools --loop uvloop``, as ``http_flow.py`` serves
snodo (``HttpApp`` over a ``Server``, proxy headers off). All on the 2026-07-28 era
(``_meta`` envelope, mirrored headers) unless said:

* **baseline**: ``async def echo(text: str) -> str``;
* **inline**: the same as a plain ``def`` registered ``inline=True`` (on the event loop);
* **thread**: a plain ``def``, the default: it runs in a thread of the server's pool.
  The thread hop is this case minus **inline**;
* **depends**: the async echo with two dependencies (``Annotated[T, Depends(fn)]``), both
  ``async def`` providers, one of them taking the request's ``Context``;
* **ask**: a declared question (``Annotated[str | None, Ask(form, pick="theme")]``), two
  rounds: ``input_required`` with the form and a sealed ``requestState``, then the retry
  with ``inputResponses`` and the state, answered ``alice: theme dark``;
* **mrtr**: the same flow asked explicitly, the handler of ``flows.py`` (``elicitation
  .response``, ``input_required(..., state=...)``) written ``async def`` like the others;
* **typed**: the async echo returning a pydantic model: ``outputSchema`` in the list,
  ``structuredContent`` (checked against it) and a text block of the same JSON;
* **legacy**: the async echo in a 2025-11-25 session (``initialize``, then
  ``Mcp-Session-Id`` on every call), sessions in process;
* **legacy-redis**: the same with ``LegacyLimits(store="redis://...")`` against a
  redis-server started on loopback (skipped, saying so, without one); the worker's CPU
  only, not redis-server's;
* **ratelimit**: the async echo behind ``RateLimit`` in memory (``snodo.middleware``),
  its budget too large to refuse anything: what one built-in middleware costs.

Each server is checked before timing (the answer's text, the typed tool's output schema
and structured content, the ask flows' question and both answers, a retry without state
asked again, an unknown session refused). During timing a flow counts as an error
unless every round answers 200 and the last carries the expected result.

The load generator is a separate process: raw asyncio ``Protocol`` connections on uvloop
(``http_flow.py``'s), pre-built request bytes, one flow at a time per connection,
``--concurrency`` connections (each its own session in the legacy cases). The cases take
turns for ``--rounds`` rounds, each measurement at most ``--requests`` requests or
``--seconds`` seconds after ``--warmup`` untimed flows. The figure is the server's CPU
per request (utime+stime from /proc/PID/stat around the timed window), median over
rounds, and its difference from the baseline's: of the medians, and **paired**, the
median over rounds of each round's difference (run seconds apart). No timing assertions.
"""

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Annotated, Any

import harness
from flows import (
    ECHOED,
    META,
    PROTOCOL,
    QUESTION,
    SCHEMA,
    SECRET,
    USER,
    snodo_build,
    state_of,
    theme_asker,
)
from http_flow import _Connection as RawConnection
from legacy_flow import REDIS_ENV, _redis_server

LEGACY = "2025-11-25"
BASELINE = "baseline"
ANSWERED = "dark"


@dataclass(frozen=True)
class Case:
    """One server process, one tool, one flow."""

    name: str
    label: str
    tool: str
    arguments: dict[str, str]
    expected: str
    """The text of the last round's answer."""
    requests: int = 1
    """Requests per flow: 2 for an ask (``input_required``, then the retry)."""
    legacy: bool = False

    @property
    def structured(self) -> dict[str, Any] | None:
        """The ``structuredContent`` the answer must carry (the typed case only)."""
        return {"text": ECHOED, "length": len(ECHOED)} if self.name == "typed" else None


ECHO = {"text": ECHOED}
CASES = (
    Case(BASELINE, "async def echo (baseline)", "echo", ECHO, ECHOED),
    Case("inline", "sync def, inline=True", "echo_inline", ECHO, ECHOED),
    Case("thread", "sync def, in a worker thread", "echo_thread", ECHO, ECHOED),
    Case("depends", "two Depends", "echo_depends", ECHO, f"{ECHOED} (guest, quota 10)"),
    Case("ask", "declarative Ask flow", "theme_ask", {"user": USER}, f"{USER}: theme dark", 2),
    Case(
        "mrtr",
        "imperative MRTR flow",
        "theme_mrtr",
        {"user": USER},
        f"{USER}: theme dark (step 2)",
        2,
    ),
    Case("typed", "typed output (pydantic model)", "echo_typed", ECHO, ""),
    Case("legacy", "legacy session echo", "echo", ECHO, ECHOED, legacy=True),
    Case("legacy-redis", "legacy session echo, Redis", "echo", ECHO, ECHOED, legacy=True),
    Case("ratelimit", "async echo, RateLimit in memory", "echo", ECHO, ECHOED),
)
BY_NAME = {case.name: case for case in CASES}


# -- the servers ------------------------------------------------------------------------


def snodo_app(case: Case) -> Any:
    """``HttpApp`` over a ``Server`` holding only ``case``'s tool."""
    from pydantic import BaseModel  # noqa: PLC0415 - only server processes need these

    from snodo import Ask, Context, Depends, Server, elicitation  # noqa: PLC0415
    from snodo.core.result import InputRequired  # noqa: PLC0415
    from snodo.middleware import RateLimit  # noqa: PLC0415
    from snodo.server import LegacyLimits  # noqa: PLC0415
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    store = os.environ[REDIS_ENV] if case.name == "legacy-redis" else None
    # A budget no run reaches: every request is counted, none refused.
    limits = [RateLimit(10**9, burst=10**9)] if case.name == "ratelimit" else []
    server = Server(
        "bench-features",
        "1.0.0",
        state_secret=SECRET,
        legacy=LegacyLimits(store=store, max_sessions=100_000),
        middleware=limits,
    )
    question = elicitation.form(QUESTION, SCHEMA)
    ask_theme = theme_asker()

    if case.name in (BASELINE, "legacy", "legacy-redis", "ratelimit"):

        @server.tool
        async def echo(text: str) -> str:
            """Say the text back."""
            return text

    elif case.name == "inline":

        @server.tool(inline=True)
        def echo_inline(text: str) -> str:
            """Say the text back, on the event loop."""
            return text

    elif case.name == "thread":

        @server.tool
        def echo_thread(text: str) -> str:
            """Say the text back, in a thread of the pool."""
            return text

    elif case.name == "depends":

        async def caller(ctx: Context) -> str:
            return ctx.principal or "guest"

        async def quota() -> int:
            return 10

        @server.tool
        async def echo_depends(
            text: str,
            user: Annotated[str, Depends(caller)],
            left: Annotated[int, Depends(quota)],
        ) -> str:
            """Say the text back, with what two dependencies provide."""
            return f"{text} ({user}, quota {left})"

    elif case.name == "ask":

        @server.tool
        async def theme_ask(
            user: str, theme: Annotated[str | None, Ask(question, pick="theme")]
        ) -> str:
            """Ask the user which theme they prefer (declared)."""
            if theme is None:
                return "Nothing changed."
            return f"{user}: theme {theme}"

    elif case.name == "mrtr":

        @server.tool
        async def theme_mrtr(user: str, ctx: Context) -> InputRequired | str:
            """Ask the user which theme they prefer (explicitly, flows.py's tool)."""
            result: InputRequired | str = ask_theme(ctx, user, question)
            return result

    elif case.name == "typed":

        class Echoed(BaseModel):
            text: str
            length: int

        @server.tool
        async def echo_typed(text: str) -> Echoed:
            """Say the text back, with its length: structured content."""
            return Echoed(text=text, length=len(text))

    return HttpApp(server, path=harness.PATH)


# -- requests -----------------------------------------------------------------------------


def headers_for(case: Case, session_id: str | None = None, method: str = "tools/call") -> bytes:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if case.legacy:
        headers["MCP-Protocol-Version"] = LEGACY
        if session_id is not None:
            headers["Mcp-Session-Id"] = session_id
    else:
        headers |= {"MCP-Protocol-Version": PROTOCOL, "Mcp-Method": method}
        if method == "tools/call":
            headers["Mcp-Name"] = case.tool
    return harness.header_lines(headers)


def call_body(
    case: Case, request_id: int, answer: str | None = None, state: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": case.tool, "arguments": case.arguments}
    if not case.legacy:
        params["_meta"] = META
    if answer is not None:
        params["inputResponses"] = {"theme": {"action": "accept", "content": {"theme": answer}}}
    if state is not None:
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def raw_request(port: int, headers: bytes, body: bytes) -> bytes:
    return b"POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sContent-Length: %d\r\n\r\n%s" % (
        harness.PATH.encode(),
        port,
        headers,
        len(body),
        body,
    )


def final_marker(case: Case) -> bytes:
    """Bytes the last round's answer must hold, checked against the real answer first."""
    if case.structured is not None:
        return b'"structuredContent":' + harness.encode(case.structured)
    return b'"text":' + json.dumps(case.expected).encode()


ASKED_MARKER = b'"resultType":"input_required"'


@dataclass(frozen=True)
class Plan:
    """A flow's pre-built bytes for one connection (its session's, in the legacy era)."""

    first: bytes
    head: bytes
    """The retry's request line and headers, up to its Content-Length."""
    prefix: bytes
    suffix: bytes
    """The retry's body around its requestState."""
    expected: bytes


def plan_for(case: Case, port: int, session_id: str | None = None) -> Plan:
    headers = headers_for(case, session_id)
    second = harness.encode(call_body(case, 2, ANSWERED, "@STATE@"))
    prefix, suffix = second.split(b"@STATE@")
    head = raw_request(port, headers, b"").rsplit(b"Content-Length:", 1)[0]
    first = raw_request(port, headers, harness.encode(call_body(case, 1)))
    return Plan(first, head, prefix, suffix, final_marker(case))


async def open_session(port: int) -> str:
    """A new 2025-11-25 session: ``initialize``, then ``notifications/initialized``."""
    conn = await harness.Connection(port).open()
    try:
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "bench-features", "version": "1.0.0"},
            },
        }
        reply = await conn.exchange(b"POST", harness.header_lines(base), harness.encode(initialize))
        session_id = reply.headers.get("mcp-session-id")
        result = (reply.messages[-1] if reply.messages else {}).get("result") or {}
        if reply.status != 200 or not session_id or result.get("protocolVersion") != LEGACY:
            raise harness.HttpError(f"initialize: {reply.status} {reply.messages}")
        headers = harness.header_lines(
            {**base, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
        )
        note = harness.encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = await conn.exchange(b"POST", headers, note)
        if reply.status != 202:
            raise harness.HttpError(f"notifications/initialized: {reply.status}")
        return session_id
    finally:
        conn.close()


async def connect(port: int) -> RawConnection:
    _, protocol = await asyncio.get_running_loop().create_connection(
        RawConnection, "127.0.0.1", port
    )
    return protocol


# -- checks before timing -----------------------------------------------------------------


class WrongAnswerError(Exception):
    """A server answered a validation request wrongly: its timings would be worthless."""


async def _post(conn: RawConnection, port: int, headers: bytes, message: dict[str, Any]) -> Any:
    status, body = await conn.request(raw_request(port, headers, harness.encode(message)))
    if status != 200:
        raise WrongAnswerError(f"HTTP {status}: {body[:300]!r}")
    return json.loads(body), body


def _text(reply: Any) -> Any:
    result = reply.get("result") or {}
    return (result.get("content") or [{}])[0].get("text")


def _check_final(case: Case, reply: Any, body: bytes, request_id: int) -> None:
    result = reply.get("result") or {}
    if reply.get("id") != request_id or result.get("isError"):
        raise WrongAnswerError(f"{case.name}: {reply}")
    if not case.legacy and result.get("resultType") != "complete":
        raise WrongAnswerError(f"{case.name}: not complete: {reply}")
    if case.structured is not None:
        if result.get("structuredContent") != case.structured:
            raise WrongAnswerError(f"{case.name}: structuredContent {reply}")
        if json.loads(_text(reply)) != case.structured:
            raise WrongAnswerError(f"{case.name}: text block {reply}")
    elif _text(reply) != case.expected:
        raise WrongAnswerError(f"{case.name}: answered {_text(reply)!r}, not {case.expected!r}")
    if final_marker(case) not in body:
        raise WrongAnswerError(f"{case.name}: the load generator's check misses {body!r}")


async def _round_one(case: Case, conn: RawConnection, port: int, headers: bytes) -> str:
    reply, body = await _post(conn, port, headers, call_body(case, 1))
    result = reply.get("result") or {}
    asked = (result.get("inputRequests") or {}).get("theme") or {}
    params = asked.get("params") or {}
    if (
        result.get("resultType") != "input_required"
        or list(result.get("inputRequests") or {}) != ["theme"]
        or asked.get("method") != "elicitation/create"
        or params.get("message") != QUESTION
        or (params.get("requestedSchema") or {}).get("properties") != SCHEMA["properties"]
        or ASKED_MARKER not in body
    ):
        raise WrongAnswerError(f"{case.name} round 1: {reply}")
    state = result.get("requestState")
    if not isinstance(state, str) or not state or state.encode() != state_of(body):
        raise WrongAnswerError(f"{case.name} round 1: no requestState: {result}")
    return state


async def validate(case: Case, port: int) -> int:
    """Check ``case``'s server; the number of checks passed (raises on the first failure)."""
    conn = await connect(port)
    session_id = await open_session(port) if case.legacy else None
    headers = headers_for(case, session_id)
    checks = 0
    try:
        if case.requests == 1:
            reply, body = await _post(conn, port, headers, call_body(case, 1))
            _check_final(case, reply, body, 1)
            checks += 1
        else:
            for theme in ("light", ANSWERED):
                state = await _round_one(case, conn, port, headers)
                reply, body = await _post(conn, port, headers, call_body(case, 2, theme, state))
                if theme == ANSWERED:
                    _check_final(case, reply, body, 2)
                elif ANSWERED in _text(reply) or theme not in _text(reply):
                    raise WrongAnswerError(f"{case.name} ({theme}): {reply}")
                checks += 2
            # An answer to a question this flow never asked (no state) is not read.
            reply, _ = await _post(conn, port, headers, call_body(case, 3, ANSWERED))
            if (reply.get("result") or {}).get("resultType") != "input_required":
                raise WrongAnswerError(f"{case.name}: an unasked answer was read: {reply}")
            checks += 1
        if case.structured is not None:
            listing = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": META}}
            reply, _ = await _post(conn, port, headers_for(case, method="tools/list"), listing)
            tool = ((reply.get("result") or {}).get("tools") or [{}])[0]
            schema = tool.get("outputSchema") or {}
            if sorted(schema.get("properties") or {}) != sorted(case.structured):
                raise WrongAnswerError(f"{case.name}: output schema {tool}")
            checks += 1
        if case.legacy:
            status, _ = await conn.request(
                raw_request(
                    port, headers_for(case, "no-such-session"), harness.encode(call_body(case, 5))
                )
            )
            if status != 404:
                raise WrongAnswerError(f"{case.name}: unknown session answered {status}")
            checks += 1
    finally:
        assert conn.transport is not None
        conn.transport.close()
    return checks


# -- the load generator (its own process) ---------------------------------------------------


@dataclass
class _Tally:
    budget: int
    deadline: float
    errors: int = 0


async def _flows(conn: RawConnection, case: Case, plan: Plan, tally: _Tally, timed: bool) -> int:
    """Run flows until the budget or the deadline; the number of flows run."""
    clock = time.perf_counter
    two_rounds = case.requests == 2
    done = 0
    while tally.budget > 0 and clock() < tally.deadline:
        tally.budget -= case.requests
        status, body = await conn.request(plan.first)
        ok = status == 200
        if two_rounds:
            state = state_of(body)
            ok = ok and bool(state) and ASKED_MARKER in body
            second = plan.prefix + state + plan.suffix
            status, body = await conn.request(
                plan.head + b"Content-Length: %d\r\n\r\n" % len(second) + second
            )
            ok = ok and status == 200
        if not ok or plan.expected not in body:
            tally.errors += 1
        done += 1
    return done if timed else 0


async def _load(args: argparse.Namespace) -> dict[str, Any]:
    case = BY_NAME[args.case]
    conns: list[RawConnection] = []
    plans: list[Plan] = []
    for _ in range(args.concurrency):
        conns.append(await connect(args.port))
        session_id = await open_session(args.port) if case.legacy else None
        plans.append(plan_for(case, args.port, session_id))
    pairs = list(zip(conns, plans, strict=True))
    warm = _Tally(budget=max(args.warmup, args.concurrency) * case.requests, deadline=0.0)
    warm.deadline = time.perf_counter() + 60
    await asyncio.gather(*(_flows(conn, case, plan, warm, False) for conn, plan in pairs))
    tally = _Tally(budget=args.requests, deadline=0.0)
    before = harness.proc_cpu_seconds(args.pid)
    client_before = time.process_time()
    started = time.perf_counter()
    tally.deadline = started + args.seconds
    counts = await asyncio.gather(*(_flows(conn, case, plan, tally, True) for conn, plan in pairs))
    elapsed = time.perf_counter() - started
    server_cpu = harness.proc_cpu_seconds(args.pid) - before
    client_cpu = time.process_time() - client_before
    for conn in conns:
        assert conn.transport is not None
        conn.transport.close()
    flows = sum(counts)
    return {
        "flows": flows,
        "requests": flows * case.requests,
        "elapsed": elapsed,
        "server_cpu": server_cpu,
        "client_cpu": client_cpu,
        "errors": tally.errors + warm.errors,
    }


def load_main(args: argparse.Namespace) -> None:
    result = harness.run_async(lambda: _load(args))
    with open(args.out, "w") as out:
        json.dump(result, out)


# -- orchestration --------------------------------------------------------------------------


def _measure(child: harness.Child, args: argparse.Namespace) -> dict[str, Any]:
    options = [
        f"--case={child.kind}",
        f"--port={child.port}",
        f"--pid={child.pid}",
        f"--concurrency={args.concurrency}",
        f"--requests={args.requests}",
        f"--seconds={args.seconds}",
        f"--warmup={args.warmup}",
    ]
    return harness.load(__file__, child, options, args.seconds + 120)


def _per_request(run: dict[str, Any]) -> float:
    return run["server_cpu"] / run["requests"] * 1e6 if run["requests"] else float("nan")


def _difference(mine: list[float], theirs: list[float]) -> tuple[float, float]:
    """Of the medians, and paired: the median of each round's difference."""
    paired = [a - b for a, b in zip(mine, theirs, strict=True)]
    return harness.median(mine) - harness.median(theirs), harness.median(paired)


def _report(cases: list[Case], runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Print the table and the differences; return each case's median server CPU µs
    per request and the differences (of the medians, and paired)."""
    per = {case.name: [_per_request(run) for run in runs[case.name]] for case in cases}
    base = per.get(BASELINE, [])
    base_cpu = harness.median(base)
    print()
    columns = ["case", "req/flow", "server CPU µs/req", "Δ µs/req", "paired Δ µs/req"]
    columns += ["server CPU µs/flow", "Δ µs/flow", "req/s", "requests", "errors"]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for case in cases:
        measured = runs[case.name]
        cpu = harness.median(per[case.name])
        delta, paired = _difference(per[case.name], base) if base else (float("nan"),) * 2
        rate = harness.median([run["requests"] / run["elapsed"] for run in measured])
        requests = sum(run["requests"] for run in measured)
        errors = sum(run["errors"] for run in measured)
        flow_delta = (cpu - base_cpu) * case.requests if base else float("nan")
        print(
            f"| {case.label} | {case.requests} | {cpu:.1f} | {delta:+.1f} | {paired:+.1f} | "
            f"{cpu * case.requests:.1f} | {flow_delta:+.1f} | {rate:.0f} | {requests} | "
            f"{errors} |"
        )
    print()
    figures: dict[str, Any] = {
        "cases": {case.name: harness.median(per[case.name]) for case in cases}
    }
    for mine, theirs, what, scale in (
        ("thread", "inline", "the thread hop (sync def in the pool - inline=True)", 1),
        ("ask", "mrtr", "declarative Ask - imperative MRTR, per flow of 2 requests", 2),
        ("legacy", BASELINE, "a legacy session's echo - the modern echo", 1),
        ("legacy-redis", "legacy", "sessions in Redis - in process (redis-server not counted)", 1),
    ):
        if mine in per and theirs in per:
            delta, paired = _difference(per[mine], per[theirs])
            print(
                f"{what}: {delta * scale:+.1f} µs (paired {paired * scale:+.1f} µs) of server CPU"
            )
            figures[f"{mine} - {theirs}"] = {"delta": delta * scale, "paired": paired * scale}
    return figures


def orchestrate(args: argparse.Namespace) -> None:
    import uvicorn  # noqa: PLC0415

    print(
        f"features: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, uvicorn {uvicorn.__version__} --http httptools --loop uvloop, "
        f"1 worker per case; snodo {snodo_build()}"
    )
    print(
        f"concurrency {args.concurrency}; {args.rounds} rounds x (<= {args.requests} requests "
        f"or <= {args.seconds:g} s, after {args.warmup} warm-up flows) per case, taking turns; "
        "medians over rounds"
    )
    names = {BASELINE, *(name for name in args.cases.split(",") if name)}
    unknown = names - set(BY_NAME)
    if unknown:
        raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))}")
    redis = _redis_server() if "legacy-redis" in names else None
    if "legacy-redis" in names and redis is None:
        print("redis-server is not installed: the Redis session store is not measured")
        names.discard("legacy-redis")
    cases = [case for case in CASES if case.name in names]
    children: list[harness.Child] = []
    with contextlib.ExitStack() as logs, ThreadPoolExecutor(len(cases)) as pool:
        try:
            started = [
                pool.submit(
                    harness.start,
                    __file__,
                    case.name,
                    logs.enter_context(tempfile.TemporaryFile("w+b")),
                )
                for case in cases
            ]
            for future in started:
                with contextlib.suppress(RuntimeError):
                    children.append(future.result())
            for future in started:
                future.result()  # raise the first that did not start, once all are known
            _run(children, args)
        finally:
            harness.stop([child.process for child in children])
            if redis is not None:
                harness.stop([redis])


def _run(children: list[harness.Child], args: argparse.Namespace) -> None:
    for child in children:
        try:
            checks = harness.run_async(functools.partial(validate, BY_NAME[child.kind], child.port))
        except (WrongAnswerError, harness.HttpError, OSError, ValueError, KeyError) as exc:
            raise RuntimeError(
                f"{child.kind} failed validation: {exc!r}\n{child.log_text()}"
            ) from exc
        print(f"validated {child.kind:12} on 127.0.0.1:{child.port}: {checks} checks passed")
    runs: dict[str, list[dict[str, Any]]] = {child.kind: [] for child in children}
    for round_index in range(args.rounds):
        shift = round_index % len(children)
        for child in children[shift:] + children[:shift]:
            runs[child.kind].append(_measure(child, args))
    figures = _report([BY_NAME[child.kind] for child in children], runs)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(figures, out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases",
        default=",".join(case.name for case in CASES),
        help="comma-separated subset (the baseline always runs)",
    )
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds, at most")
    parser.add_argument("--requests", type=int, default=40_000, help="timed requests, at most")
    parser.add_argument("--warmup", type=int, default=200, help="untimed flows first")
    parser.add_argument("--quick", action="store_true", help="a few flows: does it still run?")
    parser.add_argument("--serve", choices=tuple(BY_NAME), help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--case", choices=tuple(BY_NAME), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)  # bench/speed.py's figures
    args = parser.parse_args()
    if args.quick:
        args.concurrency, args.rounds, args.seconds = 2, 1, 0.3
        args.requests, args.warmup = 40, 4
    if args.serve:
        harness.serve_uvicorn(snodo_app(BY_NAME[args.serve]))
    elif args.load:
        load_main(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
