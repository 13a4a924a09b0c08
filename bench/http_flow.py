"""Server CPU per request over loopback HTTP: snodo, the official SDK and a floor, side by side.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/http_flow.py [--flows mrtr,echo] [--rounds 7] [--seconds 3]
                                        [--concurrency 16] [--requests 40000] [--warmup 200]

Two flows (``bench/flows.py`` says what each app does): **mrtr**, the two-round
elicitation flow (round one ``input_required`` with a signed ``requestState``, round two
the retry answered ``complete``), and **echo**, a one-round ``tools/call``.

Three servers, each in its own process, one uvicorn worker on a free 127.0.0.1 port,
all ``--http httptools --loop uvloop``, fed the same request bytes and headers. Each is
served the way its own entry point serves it: snodo as ``snodo run`` does (uvicorn's
proxy-headers middleware off unless ``--proxy-headers``), the official SDK with
uvicorn's defaults (what its ``run("streamable-http")`` passes: proxy headers on), the
floor with nothing extra.

Before timing, every server is checked with ``http.client`` (an independent client):
both flows' answers, a tampered state refused, a mismatched ``Mcp-Name`` and
``MCP-Protocol-Version`` refused; snodo and the official SDK must also refuse a state
replayed with other arguments (the floor binds its state to nothing). During timing a
flow counts as an error unless every round answers 200 and the last carries the
expected text.

The load generator is a separate process: raw asyncio ``Protocol`` connections on
uvloop, pre-built request bytes, one flow at a time per connection, ``--concurrency``
connections. A measurement runs at most ``--requests`` requests or ``--seconds`` seconds
after ``--warmup`` untimed flows; the servers and flows take turns, ``--rounds`` times,
so drift on a shared machine hits all of them. The figure that matters is the server's
own CPU per request (utime+stime from /proc/PID/stat before and after the timed
window: client cost does not leak in, and it barely moves with what else runs),
printed as a multiple of the floor's. Medians over rounds. No timing assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import platform
import socket
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any, cast

import harness
import uvicorn
from flows import (
    APPS,
    FLOWS,
    KINDS,
    OBSERVED,
    PATH,
    QUESTION,
    REQUESTS_PER_FLOW,
    SCHEMA,
    USER,
    call_body,
    encode,
    expected_text,
    final_text,
    headers_for,
    snodo_build,
    state_of,
)


def uvicorn_extra(kind: str) -> dict[str, Any]:
    """Options beyond the shared ones, as each server's own entry point sets them."""
    if kind in ("floor", "snodo", OBSERVED):
        return {"proxy_headers": False}  # snodo run: off unless --proxy-headers
    return {"proxy_headers": True}  # uvicorn's default: the official SDK passes no more


def serve(kind: str) -> None:
    """Serve one app on a free loopback port; print the port once it is listening."""
    harness.serve_uvicorn(APPS[kind](), **uvicorn_extra(kind))


def raw_request(port: int, flow: str, body: bytes) -> bytes:
    head = f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers_for(flow).items())
    return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


# -- validation with an independent client ------------------------------------------------


class WrongAnswerError(Exception):
    """A server answered a validation request wrongly: its timings would be worthless."""


def _post(port: int, message: dict[str, Any], flow: str, **changed: str) -> tuple[int, str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {**headers_for(flow), **changed}
    try:
        conn.request("POST", PATH, body=encode(message), headers=headers)
        response = conn.getresponse()
        body = response.read()
        kind = response.getheader("content-type") or ""
        decoded = json.loads(body) if kind.startswith("application/json") else {}
        return response.status, kind, decoded
    finally:
        conn.close()


def _round_one(port: int, user: str) -> str:
    status, content_type, reply = _post(port, call_body(1, "mrtr", user), "mrtr")
    if status != 200 or not content_type.startswith("application/json"):
        raise WrongAnswerError(f"round 1: HTTP {status} {content_type}")
    result = reply.get("result") or {}
    if reply.get("id") != 1 or result.get("resultType") != "input_required":
        raise WrongAnswerError(f"round 1: not input_required: {reply}")
    requests = result.get("inputRequests") or {}
    asked = requests.get("theme") or {}
    params = asked.get("params") or {}
    if (
        list(requests) != ["theme"]
        or asked.get("method") != "elicitation/create"
        or params.get("mode", "form") != "form"
        or params.get("message") != QUESTION
        or (params.get("requestedSchema") or {}).get("properties") != SCHEMA["properties"]
    ):
        raise WrongAnswerError(f"round 1: wrong elicitation: {requests}")
    state = result.get("requestState")
    if not isinstance(state, str) or not state:
        raise WrongAnswerError(f"round 1: no requestState: {result}")
    return state


def _text(reply: Any) -> Any:
    result = reply.get("result") or {}
    if result.get("resultType") != "complete":
        return None
    return (result.get("content") or [{}])[0].get("text")


def validate(kind: str, port: int) -> int:
    """Check correctness; return the number of checks passed (raises on the first failure)."""
    state = _round_one(port, USER)
    checks = 1
    for theme in ("dark", "light"):
        status, _, reply = _post(port, call_body(2, "mrtr", USER, theme, state), "mrtr")
        if status != 200 or reply.get("id") != 2 or _text(reply) != final_text(USER, theme, 1):
            raise WrongAnswerError(f"round 2 ({theme}): {status} {reply}")
        checks += 1
    middle = len(state) // 2
    tampered = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]
    _, _, reply = _post(port, call_body(2, "mrtr", USER, "dark", tampered), "mrtr")
    if "error" not in reply:
        raise WrongAnswerError(f"tampered state accepted: {reply}")
    checks += 1
    if kind != "floor":  # the floor signs the state but binds it to nothing
        _, _, reply = _post(port, call_body(2, "mrtr", "mallory", "dark", state), "mrtr")
        if "error" not in reply:
            raise WrongAnswerError(f"state replayed with other arguments accepted: {reply}")
        checks += 1
    status, _, reply = _post(port, call_body(3, "echo"), "echo")
    if status != 200 or _text(reply) != expected_text("echo"):
        raise WrongAnswerError(f"echo: {status} {reply}")
    checks += 1
    for header, value in (("Mcp-Name", "theme"), ("MCP-Protocol-Version", "2099-01-01")):
        status, _, reply = _post(port, call_body(4, "echo"), "echo", **{header: value})
        if status != 400:
            raise WrongAnswerError(f"{header}: {value} accepted: {status} {reply}")
        checks += 1
    return checks


# -- the load generator (its own process) -------------------------------------------------


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection, one request in flight, Content-Length bodies."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None:
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).lower()
        at = head.find(b"\r\ncontent-length:")
        if at < 0:
            self._fail(ConnectionError("response without Content-Length"))
            return
        stop = head.find(b"\r\n", at + 2)
        length = int(head[at + 17 : stop if stop >= 0 else len(head)])
        total = end + 4 + length
        if len(self.buffer) < total:
            return
        status = int(head[9:12])
        body = bytes(self.buffer[end + 4 : total])
        del self.buffer[:total]
        waiter, self.waiter = self.waiter, None
        waiter.set_result((status, body))

    def _fail(self, exc: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)
        self.waiter = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(ConnectionError("connection closed"))

    def request(self, data: bytes) -> asyncio.Future[tuple[int, bytes]]:
        assert self.transport is not None and self.waiter is None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.waiter


@dataclass
class _Tally:
    budget: int
    deadline: float
    errors: int = 0


async def _flows(conn: _Connection, port: int, flow: str, tally: _Tally, timed: bool) -> int:
    """Run flows until the budget or the deadline; the number of flows run."""
    first = raw_request(port, flow, encode(call_body(1, flow)))
    prefix, suffix = encode(call_body(2, flow, USER, "dark", "@STATE@")).split(b"@STATE@")
    head = raw_request(port, flow, b"").rsplit(b"Content-Length:", 1)[0]
    expected = expected_text(flow).encode()
    two_rounds = flow == "mrtr"
    clock = time.perf_counter
    done = 0
    while tally.budget > 0 and clock() < tally.deadline:
        tally.budget -= REQUESTS_PER_FLOW[flow]
        status, body = await conn.request(first)
        ok = status == 200
        if two_rounds:
            state = state_of(body)
            second = prefix + state + suffix
            status, body = await conn.request(
                head + b"Content-Length: %d\r\n\r\n" % len(second) + second
            )
            ok = ok and status == 200 and bool(state)
        if not ok or expected not in body:
            tally.errors += 1
        done += 1
    return done if timed else 0


async def _load(args: argparse.Namespace) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    conns: list[_Connection] = []
    for _ in range(args.concurrency):
        _, protocol = await loop.create_connection(_Connection, "127.0.0.1", args.port)
        conns.append(protocol)
    warm = _Tally(budget=max(args.warmup, args.concurrency), deadline=time.perf_counter() + 60)
    await asyncio.gather(*(_flows(conn, args.port, args.flow, warm, False) for conn in conns))
    tally = _Tally(budget=args.requests, deadline=0.0)
    pids = [int(pid) for pid in str(args.pid).split(",")]  # a proxy and its backend: both
    before = [harness.proc_cpu_seconds(pid) for pid in pids]
    client_before = time.process_time()
    started = time.perf_counter()
    tally.deadline = started + args.seconds
    counts = await asyncio.gather(
        *(_flows(conn, args.port, args.flow, tally, True) for conn in conns)
    )
    elapsed = time.perf_counter() - started
    each = [harness.proc_cpu_seconds(pid) - was for pid, was in zip(pids, before, strict=True)]
    server_cpu = sum(each)
    client_cpu = time.process_time() - client_before
    for conn in conns:
        assert conn.transport is not None
        conn.transport.close()
    flows = sum(counts)
    return {
        "flows": flows,
        "requests": flows * REQUESTS_PER_FLOW[args.flow],
        "elapsed": elapsed,
        "server_cpu": server_cpu,
        "server_cpus": each,
        "client_cpu": client_cpu,
        "errors": tally.errors + warm.errors,
    }


def load_main(args: argparse.Namespace) -> None:
    import uvloop  # noqa: PLC0415 - only the load generator needs it directly

    result = uvloop.run(_load(args))
    with open(args.out, "w") as out:
        json.dump(result, out)


# -- orchestration ------------------------------------------------------------------------


def _measure(server: harness.Child, flow: str, args: argparse.Namespace) -> dict[str, Any]:
    options = [
        f"--flow={flow}",
        f"--port={server.port}",
        f"--pid={server.pid}",
        f"--concurrency={args.concurrency}",
        f"--requests={args.requests}",
        f"--seconds={args.seconds}",
        f"--warmup={args.warmup}",
    ]
    return harness.load(__file__, server, options, args.seconds + 120)


def orchestrate(args: argparse.Namespace) -> None:
    flows = [flow for flow in args.flows.split(",") if flow]
    print(
        f"http_flow: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, uvicorn {uvicorn.__version__} --http httptools --loop uvloop, "
        f"1 worker per server; snodo {snodo_build()}"
    )
    print(
        f"concurrency {args.concurrency}; {args.rounds} rounds x (<= {args.requests} requests "
        f"or <= {args.seconds:g} s, after {args.warmup} warm-up flows) per server and flow, "
        "taking turns; medians over rounds"
    )
    servers: list[harness.Child] = []
    with contextlib.ExitStack() as logs:
        try:
            for kind in (k for k in (*KINDS, OBSERVED) if k in args.servers.split(",")):
                log = logs.enter_context(tempfile.TemporaryFile("w+b"))
                servers.append(harness.start(__file__, kind, log))
            _run(servers, flows, args)
        finally:
            harness.stop([server.process for server in servers])


def _run(servers: list[harness.Child], flows: list[str], args: argparse.Namespace) -> None:
    for server in servers:
        try:
            checks = validate(server.kind, server.port)
        except (WrongAnswerError, OSError, ValueError) as exc:
            raise RuntimeError(
                f"{server.kind} failed validation: {exc}\n{server.log_text()}"
            ) from exc
        print(f"validated {server.kind:8} on 127.0.0.1:{server.port}: {checks} checks passed")
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {
        (server.kind, flow): [] for server in servers for flow in flows
    }
    turns = [(server, flow) for flow in flows for server in servers]
    for round_index in range(args.rounds):
        shift = round_index % len(turns)
        for server, flow in turns[shift:] + turns[:shift]:
            runs[(server.kind, flow)].append(_measure(server, flow, args))
    _report(runs, flows)


def _report(runs: dict[tuple[str, str], list[dict[str, Any]]], flows: list[str]) -> None:
    for flow in flows:
        print()
        print(f"flow {flow} ({REQUESTS_PER_FLOW[flow]} request(s) per flow)")
        print(
            f"  {'server':9} {'server CPU µs/req':>18} {'x floor':>8} {'paired':>7} "
            f"{'rounds µs/req':>15} {'req/s':>7} {'client µs/req':>14} {'requests':>9} "
            f"{'errors':>6}"
        )
        floor = None
        floor_rounds: list[float] = []
        for kind in (kind for kind in (*KINDS, OBSERVED) if (kind, flow) in runs):
            measured = runs[(kind, flow)]
            per = [run["server_cpu"] / run["requests"] * 1e6 for run in measured]
            cpu = statistics.median(per)
            if kind == "floor":
                floor, floor_rounds = cpu, per
            # Each round against the floor's of the same round, run seconds apart: a
            # slower or faster phase of the machine moves both, so it cancels out.
            paired = (
                statistics.median(
                    mine / theirs for mine, theirs in zip(per, floor_rounds, strict=True)
                )
                if floor_rounds
                else float("nan")
            )
            rate = statistics.median(run["requests"] / run["elapsed"] for run in measured)
            client = statistics.median(
                run["client_cpu"] / run["requests"] * 1e6 for run in measured
            )
            requests = sum(run["requests"] for run in measured)
            errors = sum(run["errors"] for run in measured)
            ratio = cpu / floor if floor else float("nan")
            print(
                f"  {kind:9} {cpu:18.1f} {ratio:7.2f}x {paired:6.2f}x "
                f"{min(per):6.0f}-{max(per):<8.0f} {rate:7.0f} {client:14.1f} {requests:9d} "
                f"{errors:6d}"
            )
    print()
    goal = "1.5x (pure Python)" if snodo_build() == "pure Python" else "1.2x (compiled)"
    print(f"target: snodo's server CPU per request <= {goal} the floor's, both flows")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", default=",".join(FLOWS), help="comma-separated: mrtr,echo")
    parser.add_argument("--servers", default=",".join(KINDS), help="comma-separated subset")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds, at most")
    parser.add_argument("--requests", type=int, default=40_000, help="timed requests, at most")
    parser.add_argument("--warmup", type=int, default=200, help="untimed flows first")
    parser.add_argument("--serve", choices=(*KINDS, OBSERVED), help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--flow", choices=FLOWS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pid", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
    elif args.load:
        load_main(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
