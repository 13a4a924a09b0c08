"""Complete two-round elicitation flows over loopback HTTP: snodo, the official SDK, a floor.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/http_flow.py [--concurrency 16] [--rounds 3] [--seconds 5]
                                        [--flows 20000] [--warmup 200]

A flow is what a 2026-07-28 client does for a tool that asks the user one question:

1. POST ``tools/call theme {"user": "alice"}``; the server answers ``input_required`` with
   one form elicitation (``inputRequests.theme``: pick light, dark or system) and a
   signed ``requestState`` carrying ``{"user": "alice", "step": 1}``;
2. POST the same call again with ``inputResponses.theme`` (accept, ``{"theme": "dark"}``)
   and the ``requestState`` echoed; the server checks the state and answers ``complete``
   with the text ``alice: theme dark (step 2)``.

Three servers, each in its own process, one uvicorn worker on a free 127.0.0.1 port,
all ``--http httptools --loop uvloop``, the same request bytes and headers
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, keep-alive):

* **snodo**: ``snodo.transports.http.HttpApp`` serving a ``snodo.Server`` whose tool uses
  ``snodo.elicitation`` (form request built once, answer checked against its schema) and
  ``snodo.state`` (HMAC-SHA256 token bound to method, principal and arguments);
* **official**: ``mcp`` 2.3.0 ``MCPServer``, ``streamable_http_app(json_response=True,
  stateless_http=True)``; the tool returns ``InputRequiredResult`` and reads
  ``ctx.input_responses``/``ctx.request_state``, the SDK's own MRTR mechanism, with its
  ``RequestStateBoundary`` sealing the state (AES-256-GCM, bound to method, tool,
  arguments digest and audience) under ``RequestStateSecurity(keys=[...])``;
* **floor**: a bare ASGI app: ``json.loads``, HMAC-SHA256 seal or verify of the small
  state, ``json.dumps``. No header checks, no schema checks, no binding: any real server
  does at least this.

Before timing, every server is checked with ``http.client`` (an independent client):
round 1 shape, round 2 text for two answers, a tampered state refused; snodo and the
official SDK must also refuse a state replayed with other arguments. During timing the
load generator counts a flow as an error unless both rounds answer 200 and round 2
carries the expected text.

The load generator is a separate process: raw asyncio ``Protocol`` connections on uvloop,
pre-built request bytes, one flow at a time per connection, ``--concurrency``
connections. Each measurement runs at most ``--flows`` flows and at most ``--seconds``
seconds after ``--warmup`` untimed flows; servers take turns, ``--rounds`` times, so
drift on a shared machine hits all of them. Reported per server: the median over rounds
of flows/s and of server CPU microseconds per flow (utime+stime from /proc/PID/stat of
the server process, before and after the timed window, so client cost does not leak
in), p50/p99 flow latency over all timed flows, and the load generator's own CPU per
flow. CPU per flow is the steadier figure; flows/s swings with whatever else runs.
No timing assertions.
"""

import argparse
import asyncio
import base64
import contextlib
import hashlib
import hmac
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, cast

import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

KINDS = ("snodo", "official", "floor")
SECRET = bytes(range(32))  # a fixed benchmark key, shared by nobody
PROTOCOL = "2026-07-28"
PATH = "/mcp"
TOOL = "theme"
USER = "alice"
THEMES = ["light", "dark", "system"]
QUESTION = "Which theme do you prefer?"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"theme": {"type": "string", "title": "Theme", "enum": THEMES}},
    "required": ["theme"],
}
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}
ELICITATION: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {"mode": "form", "message": QUESTION, "requestedSchema": SCHEMA},
}


def final_text(user: str, theme: str, step: int) -> str:
    return f"{user}: theme {theme} (step {step + 1})"


# -- the three servers ------------------------------------------------------------------


def snodo_app() -> AsgiApp:
    from snodo import elicitation, state  # noqa: PLC0415 - only the snodo process needs it
    from snodo.context import Context  # noqa: PLC0415
    from snodo.result import InputRequired, input_required  # noqa: PLC0415
    from snodo.server import Server  # noqa: PLC0415
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    server = Server("bench-flow", "1.0.0")
    question = elicitation.form(QUESTION, SCHEMA)

    @server.tool
    def theme(user: str, ctx: Context) -> InputRequired | str:
        """Ask the user which theme they prefer."""
        answer = elicitation.response(ctx, "theme", question)
        if isinstance(answer, elicitation.Declined | elicitation.Cancelled):
            return "Nothing changed."
        if ctx.request_state is None or not isinstance(answer, elicitation.Accepted):
            data = {"user": user, "step": 1}
            sealed = state.seal(data, ctx, secret=SECRET, principal=ctx.principal)
            return input_required({"theme": question}, request_state=sealed)
        known = state.open(ctx.request_state, ctx, secret=SECRET, principal=ctx.principal)
        return final_text(known["user"], str(answer.content["theme"]), known["step"])

    return HttpApp(server, path=PATH)


def official_app() -> AsgiApp:
    import mcp_types as types  # noqa: PLC0415 - the SDK is the optional bench extra
    from mcp.server.mcpserver import Context, MCPServer  # noqa: PLC0415
    from mcp.server.request_state import RequestStateSecurity  # noqa: PLC0415

    server = MCPServer(
        "bench-flow",
        version="1.0.0",
        request_state_security=RequestStateSecurity(keys=[SECRET]),
    )
    question = types.ElicitRequest(
        method="elicitation/create",
        params=types.ElicitRequestFormParams(
            mode="form", message=QUESTION, requested_schema=SCHEMA
        ),
    )

    @server.tool()
    def theme(user: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the user which theme they prefer."""
        answer = (ctx.input_responses or {}).get("theme")
        chosen = None
        if isinstance(answer, types.ElicitResult):
            if answer.action != "accept":
                return "Nothing changed."
            chosen = (answer.content or {}).get("theme")
        if ctx.request_state is None or chosen not in THEMES:
            return types.InputRequiredResult(
                input_requests={"theme": question},
                request_state=json.dumps({"user": user, "step": 1}),
            )
        known = json.loads(ctx.request_state)
        return final_text(known["user"], str(chosen), known["step"])

    app: AsgiApp = server.streamable_http_app(
        streamable_http_path=PATH, json_response=True, stateless_http=True
    )
    return app


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _floor_result(params: dict[str, Any]) -> dict[str, Any] | None:
    token = params.get("requestState")
    if token is None:
        payload = _b64(json.dumps({"user": params["arguments"]["user"], "step": 1}).encode())
        mac = _b64(hmac.digest(SECRET, payload.encode("ascii"), hashlib.sha256))
        return {
            "resultType": "input_required",
            "inputRequests": {"theme": ELICITATION},
            "requestState": f"{payload}.{mac}",
        }
    payload, _, mac = str(token).rpartition(".")
    expected = _b64(hmac.digest(SECRET, payload.encode("ascii"), hashlib.sha256))
    if not hmac.compare_digest(expected, mac):
        return None
    known = json.loads(_unb64(payload))
    chosen = params["inputResponses"]["theme"]["content"]["theme"]
    text = final_text(known["user"], chosen, known["step"])
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


async def floor_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request = json.loads(body)
    result = _floor_result(request["params"])
    if result is None:
        reply: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -32602, "message": "Invalid requestState"},
        }
    else:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    out = json.dumps(reply, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(out))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def serve(kind: str) -> None:
    """Serve one app on a free loopback port; print the port once it is listening."""
    app: AsgiApp = {"snodo": snodo_app, "official": official_app}.get(kind, lambda: floor_app)()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)  # connections queue here until uvicorn's loop accepts them
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(
        app,
        http="httptools",
        loop="uvloop",
        lifespan="on",
        log_level="warning",
        access_log=False,
        workers=1,
    )
    uvicorn.Server(config).run(sockets=[sock])


# -- requests ---------------------------------------------------------------------------


def call_body(
    request_id: int, user: str, theme: str | None = None, state: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": META, "name": TOOL, "arguments": {"user": user}}
    if theme is not None:
        params["inputResponses"] = {"theme": {"action": "accept", "content": {"theme": theme}}}
    if state is not None:
        params["requestState"] = state
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PROTOCOL,
    "Mcp-Method": "tools/call",
    "Mcp-Name": TOOL,
}


def raw_request(port: int, body: bytes) -> bytes:
    head = f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in HEADERS.items())
    return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


# -- validation with an independent client ----------------------------------------------


def _post(port: int, message: dict[str, Any]) -> tuple[int, str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", PATH, body=encode(message), headers=HEADERS)
        response = conn.getresponse()
        body = response.read()
        return response.status, response.getheader("content-type") or "", json.loads(body)
    finally:
        conn.close()


class WrongAnswerError(Exception):
    """A server answered a validation request wrongly: its timings would be worthless."""


def _round_one(port: int, user: str) -> str:
    status, content_type, reply = _post(port, call_body(1, user))
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


def _round_two(port: int, user: str, theme: str, state: str) -> Any:
    status, _, reply = _post(port, call_body(2, user, theme, state))
    return status, reply


def validate(kind: str, port: int) -> int:
    """Check correctness; return the number of checks passed (raises on the first failure)."""
    state = _round_one(port, USER)
    for theme in ("dark", "light"):
        status, reply = _round_two(port, USER, theme, state)
        result = reply.get("result") or {}
        content = result.get("content") or [{}]
        if (
            status != 200
            or reply.get("id") != 2
            or result.get("resultType") != "complete"
            or content[0].get("text") != final_text(USER, theme, 1)
        ):
            raise WrongAnswerError(f"round 2 ({theme}): {status} {reply}")
    checks = 3
    middle = len(state) // 2
    tampered = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1 :]
    status, reply = _round_two(port, USER, "dark", tampered)
    if "error" not in reply:
        raise WrongAnswerError(f"tampered state accepted: {status} {reply}")
    checks += 1
    if kind != "floor":  # the floor signs the state but binds it to nothing
        status, reply = _round_two(port, "mallory", "dark", state)
        if "error" not in reply:
            raise WrongAnswerError(f"state replayed with other arguments accepted: {reply}")
        checks += 1
    return checks


# -- the load generator (its own process) -----------------------------------------------


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/PID/stat (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


STATE_MARK = b'"requestState":"'


@dataclass
class _Tally:
    budget: int
    deadline: float
    errors: int = 0


async def _flows(
    conn: _Connection, port: int, tally: _Tally, latencies: list[float] | None
) -> None:
    first = raw_request(port, encode(call_body(1, USER)))
    prefix, suffix = encode(call_body(2, USER, "dark", "@STATE@")).split(b"@STATE@")
    expected = final_text(USER, "dark", 1).encode()
    head = raw_request(port, b"").rsplit(b"Content-Length:", 1)[0]
    clock = time.perf_counter
    while tally.budget > 0 and clock() < tally.deadline:
        tally.budget -= 1
        started = clock()
        status, body = await conn.request(first)
        at = body.find(STATE_MARK) + len(STATE_MARK)
        state = body[at : body.find(b'"', at)] if at >= len(STATE_MARK) else b""
        second = prefix + state + suffix
        status2, body2 = await conn.request(
            head + b"Content-Length: %d\r\n\r\n" % len(second) + second
        )
        if latencies is not None:
            latencies.append(clock() - started)
        if status != 200 or status2 != 200 or expected not in body2 or not state:
            tally.errors += 1


async def _load(
    port: int, pid: int, concurrency: int, flows: int, seconds: float, warmup: int
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    conns: list[_Connection] = []
    for _ in range(concurrency):
        _, protocol = await loop.create_connection(_Connection, "127.0.0.1", port)
        conns.append(protocol)
    warm = _Tally(budget=max(warmup, concurrency), deadline=time.perf_counter() + 60)
    await asyncio.gather(*(_flows(conn, port, warm, None) for conn in conns))
    latencies: list[float] = []
    tally = _Tally(budget=flows, deadline=0.0)
    server_before, client_before = proc_cpu_seconds(pid), time.process_time()
    started = time.perf_counter()
    tally.deadline = started + seconds
    await asyncio.gather(*(_flows(conn, port, tally, latencies) for conn in conns))
    elapsed = time.perf_counter() - started
    server_cpu = proc_cpu_seconds(pid) - server_before
    client_cpu = time.process_time() - client_before
    for conn in conns:
        assert conn.transport is not None
        conn.transport.close()
    return {
        "flows": len(latencies),
        "elapsed": elapsed,
        "server_cpu": server_cpu,
        "client_cpu": client_cpu,
        "latencies": latencies,
        "errors": tally.errors + warm.errors,
    }


def load_main(args: argparse.Namespace) -> None:
    import uvloop  # noqa: PLC0415 - only the load generator needs it directly

    result = uvloop.run(
        _load(args.port, args.pid, args.concurrency, args.flows, args.seconds, args.warmup)
    )
    with open(args.out, "w") as out:
        json.dump(result, out)


# -- orchestration ----------------------------------------------------------------------


@dataclass
class _Server:
    kind: str
    process: subprocess.Popen[str]
    port: int
    log: Any


def _start(kind: str, log: Any) -> _Server:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        log.seek(0)
        raise RuntimeError(f"{kind} server did not start: {line!r}\n{log.read()}")
    return _Server(kind, process, int(line.split()[1]), log)


def _measure(server: _Server, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        command = [
            sys.executable,
            __file__,
            "--load",
            f"--out={out.name}",
            f"--port={server.port}",
            f"--pid={server.process.pid}",
            f"--concurrency={args.concurrency}",
            f"--flows={args.flows}",
            f"--seconds={args.seconds}",
            f"--warmup={args.warmup}",
        ]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.seconds + 120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"load generator failed on {server.kind}:\n{done.stderr}")
        result: dict[str, Any] = json.load(out)
    return result


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def orchestrate(args: argparse.Namespace) -> None:
    print(
        f"http_flow: {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, uvicorn {uvicorn.__version__} --http httptools --loop uvloop, "
        "1 worker per server"
    )
    print(
        f"concurrency {args.concurrency}; {args.rounds} rounds x (<= {args.flows} flows or "
        f"<= {args.seconds:g} s, after {args.warmup} warm-up flows) per server, servers "
        "taking turns; medians over rounds"
    )
    servers: list[_Server] = []
    with contextlib.ExitStack() as logs:
        try:
            for kind in KINDS:
                servers.append(_start(kind, logs.enter_context(tempfile.TemporaryFile("w+"))))
            _run(servers, args)
        finally:
            _stop(servers)


def _run(servers: list[_Server], args: argparse.Namespace) -> None:
    for server in servers:
        try:
            checks = validate(server.kind, server.port)
        except (WrongAnswerError, OSError, ValueError) as exc:
            server.log.seek(0)
            raise RuntimeError(
                f"{server.kind} failed validation: {exc}\n{server.log.read()}"
            ) from exc
        print(f"validated {server.kind:8} on 127.0.0.1:{server.port}: {checks} checks passed")
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in KINDS}
    for round_index in range(args.rounds):
        order = servers[round_index % len(servers) :] + servers[: round_index % len(servers)]
        for server in order:
            runs[server.kind].append(_measure(server, args))
    _report(runs)


def _stop(servers: list[_Server]) -> None:
    """Stop the server processes this run started (by their own handles, nothing else)."""
    for server in servers:
        server.process.terminate()
    for server in servers:
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
        if server.process.stdout is not None:
            server.process.stdout.close()


def _report(runs: dict[str, list[dict[str, Any]]]) -> None:
    rows: dict[str, dict[str, float]] = {}
    print()
    print(
        f"{'server':9} {'flows/s':>9} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'server CPU µs/flow':>19} {'client CPU µs/flow':>19} {'flows':>7} {'errors':>6}"
    )
    for kind in ("floor", "snodo", "official"):
        measured = runs[kind]
        latencies = [value for run in measured for value in run["latencies"]]
        flows = sum(run["flows"] for run in measured)
        row = {
            "rate": statistics.median(run["flows"] / run["elapsed"] for run in measured),
            "p50": _percentile(latencies, 0.50) * 1e3,
            "p99": _percentile(latencies, 0.99) * 1e3,
            "cpu": statistics.median(run["server_cpu"] / run["flows"] * 1e6 for run in measured),
            "client": statistics.median(run["client_cpu"] / run["flows"] * 1e6 for run in measured),
        }
        rows[kind] = row
        errors = sum(run["errors"] for run in measured)
        print(
            f"{kind:9} {row['rate']:9.0f} {row['p50']:8.2f} {row['p99']:8.2f} "
            f"{row['cpu']:19.0f} {row['client']:19.0f} {flows:7d} {errors:6d}"
        )
    print()
    for other, target in (("official", "target >= 3"), ("floor", "target >= 0.5")):
        rate = rows["snodo"]["rate"] / rows[other]["rate"]
        cpu = rows["snodo"]["cpu"] / rows[other]["cpu"]
        print(
            f"snodo/{other}: flows/s x{rate:.2f} ({target}); "
            f"server CPU per flow x{cpu:.2f} ({other} uses x{1 / cpu:.2f} of snodo's)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds, at most")
    parser.add_argument("--flows", type=int, default=20_000, help="timed flows, at most")
    parser.add_argument("--warmup", type=int, default=200, help="untimed flows first")
    parser.add_argument("--serve", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--load", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--pid", type=int, help=argparse.SUPPRESS)
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
