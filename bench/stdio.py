"""Requests per second over stdio: ``snodo run --transport stdio`` against the official SDK.

Run from the repository root:

    .venv/bin/python bench/stdio.py [--window 32] [--rounds 3] [--seconds 3]
                                    [--requests 20000] [--warmup 500] [--quick]

The same ``echo`` tool on both servers; each server a child process on pipes:

* **snodo**: ``snodo run --transport stdio bench/stdio.py:snodo_server`` (the console
  script of the installed package, default asyncio loop);
* **official**: ``mcp`` 2.3.0 ``MCPServer(...).run("stdio")`` (anyio on asyncio).

Two flows, each against its own process (the first request decides a stdio process's
era on both):

* **modern**: ``tools/call echo {"text": "hello"}`` with the 2026-07-28 ``_meta``
  envelope on every request;
* **legacy**: ``initialize`` (2025-11-25), ``notifications/initialized``, then the same
  call without ``_meta`` within the session.

The client writes newline-delimited JSON, pipelined: up to ``--window`` requests in
flight, a new one written as each answer is read. Every answer is parsed and checked
(its id was sent and not yet answered, the result's text is ``hello``); anything else
is an error. Measurements take turns for ``--rounds`` rounds, each at most
``--requests`` requests or ``--seconds`` seconds after ``--warmup`` untimed ones.
Reported: median over rounds of requests/s and of the server process's CPU µs per
request (utime+stime from /proc/PID/stat around the timed window). No timing assertions.
"""

import argparse
import asyncio
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

KINDS = ("snodo", "official")
FLOWS = ("modern", "legacy")
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
TEXT = "hello"


# -- the servers (each loaded in its own process) ---------------------------------------------


def snodo_server() -> Any:
    """The target ``snodo run`` loads: ``bench/stdio.py:snodo_server``."""
    from snodo.server import Server  # noqa: PLC0415 - only the snodo process needs it

    server = Server("bench-stdio", "1.0.0")

    @server.tool
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    return server


def serve_official() -> None:
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415 - the bench extra

    server = MCPServer("bench-stdio", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    server.run("stdio")


def command(kind: str) -> list[str]:
    if kind == "official":
        return [sys.executable, __file__, "--serve", "official"]
    script = os.path.join(os.path.dirname(sys.executable), "snodo")
    return [script, "run", "--transport", "stdio", f"{__file__}:snodo_server"]


# -- the client ------------------------------------------------------------------------------


def request_line(request_id: int, flow: str) -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": TEXT}}
    if flow == "modern":
        params["_meta"] = META
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class WrongAnswerError(Exception):
    """The server answered wrongly: its timings would be worthless."""


@dataclass
class Child:
    kind: str
    flow: str
    process: asyncio.subprocess.Process
    next_id: int = 1

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """One request, its answer (skipping anything else the server writes)."""
        self.stdin.write(json.dumps(message).encode() + b"\n")
        await self.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.stdout.readline(), 30)
            if not line:
                raise WrongAnswerError(f"{self.kind}: end of output")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer

    async def open(self) -> None:
        """Decide the era; for legacy, the handshake."""
        if self.flow == "legacy":
            answer = await self.ask(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LEGACY,
                        "capabilities": {},
                        "clientInfo": {"name": "bench-stdio", "version": "1.0.0"},
                    },
                }
            )
            if (answer.get("result") or {}).get("protocolVersion") != LEGACY:
                raise WrongAnswerError(f"{self.kind}: initialize answered {answer}")
            self.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        answer = await self.ask(json.loads(request_line(0x7FFF_FFFF, self.flow)))
        if _text(answer) != TEXT:
            raise WrongAnswerError(f"{self.kind} {self.flow}: echo answered {answer}")
        unknown = json.loads(request_line(0x7FFF_FFFE, self.flow))
        unknown["params"]["name"] = "no-such-tool"
        answer = await self.ask(unknown)
        result = answer.get("result") or {}
        if "error" not in answer and not result.get("isError"):
            raise WrongAnswerError(f"{self.kind} {self.flow}: an unknown tool answered {answer}")

    async def pump(self, count: int, seconds: float, window: int) -> dict[str, Any]:
        """``count`` pipelined requests (or ``seconds``); answers checked."""
        outstanding: set[int] = set()
        room = asyncio.Semaphore(window)
        tally = {"sent": 0, "answered": 0, "errors": 0}
        deadline = time.perf_counter() + seconds

        async def read() -> None:
            while True:
                line = await self.stdout.readline()
                if not line:
                    raise WrongAnswerError(f"{self.kind}: end of output")
                answer = json.loads(line)
                request_id = answer.get("id")
                if request_id not in outstanding or _text(answer) != TEXT:
                    tally["errors"] += 1
                outstanding.discard(request_id)
                tally["answered"] += 1
                room.release()

        reader = asyncio.ensure_future(read())
        try:
            while tally["sent"] < count and time.perf_counter() < deadline:
                await room.acquire()
                if reader.done():
                    break
                request_id, self.next_id = self.next_id, self.next_id + 1
                outstanding.add(request_id)
                self.stdin.write(request_line(request_id, self.flow))
                tally["sent"] += 1
                if not tally["sent"] % 8:
                    await self.stdin.drain()
            await self.stdin.drain()
            limit = time.perf_counter() + 60
            while tally["answered"] < tally["sent"] and not reader.done():
                if time.perf_counter() > limit:
                    raise WrongAnswerError(f"{self.kind}: answers stopped coming")
                await asyncio.sleep(0.001)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        return tally


def _text(answer: dict[str, Any]) -> str | None:
    content = (answer.get("result") or {}).get("content") or [{}]
    text = content[0].get("text")
    return text if isinstance(text, str) else None


async def _measure(child: Child, args: argparse.Namespace) -> dict[str, Any]:
    import harness  # noqa: PLC0415 - bench/ is on sys.path only when run as a script

    pid = child.process.pid
    await child.pump(args.warmup, 60, args.window)
    server_before, client_before = harness.proc_cpu_seconds(pid), time.process_time()
    started = time.perf_counter()
    tally = await child.pump(args.requests, args.seconds, args.window)
    elapsed = time.perf_counter() - started
    return {
        "requests": tally["answered"],
        "errors": tally["errors"],
        "elapsed": elapsed,
        "server_cpu": harness.proc_cpu_seconds(pid) - server_before,
        "client_cpu": time.process_time() - client_before,
    }


async def _run(args: argparse.Namespace, log: Any) -> dict[tuple[str, str], list[dict[str, Any]]]:
    children: list[Child] = []
    try:
        for kind in KINDS:
            for flow in FLOWS:
                process = await asyncio.create_subprocess_exec(
                    *command(kind),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    limit=1 << 20,
                )
                children.append(Child(kind, flow, process))
        for child in children:
            await child.open()
            print(f"validated {child.kind:8} {child.flow}: echo, an unknown tool refused")
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {
            (child.kind, child.flow): [] for child in children
        }
        for round_index in range(args.rounds):
            shift = round_index % len(children)
            for child in children[shift:] + children[:shift]:
                runs[(child.kind, child.flow)].append(await _measure(child, args))
        return runs
    finally:
        # End of input ends both servers; a child that does not go is killed (by its handle).
        for child in children:
            if child.process.stdin is not None:
                child.process.stdin.close()
        for child in children:
            try:
                await asyncio.wait_for(child.process.wait(), 10)
            except TimeoutError:
                child.process.kill()
                await child.process.wait()


def _report(runs: dict[tuple[str, str], list[dict[str, Any]]]) -> None:
    import harness  # noqa: PLC0415

    rows: dict[tuple[str, str], dict[str, float]] = {}
    print()
    columns = ["server", "flow", "requests/s", "server CPU µs/request"]
    columns += ["client CPU µs/request", "requests", "errors"]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for flow in FLOWS:
        for kind in KINDS:
            measured = runs[(kind, flow)]
            row = {
                "rate": harness.median([run["requests"] / run["elapsed"] for run in measured]),
                "cpu": harness.median(
                    [run["server_cpu"] / run["requests"] * 1e6 for run in measured]
                ),
                "client": harness.median(
                    [run["client_cpu"] / run["requests"] * 1e6 for run in measured]
                ),
            }
            rows[(kind, flow)] = row
            print(
                f"| {kind} | {flow} | {row['rate']:.0f} | {row['cpu']:.1f} | "
                f"{row['client']:.1f} | {sum(run['requests'] for run in measured)} | "
                f"{sum(run['errors'] for run in measured)} |"
            )
    print()
    for flow in FLOWS:
        ours, theirs = rows[("snodo", flow)], rows[("official", flow)]
        print(
            f"{flow}: snodo's requests/s {harness.ratio(ours['rate'], theirs['rate'])} of the "
            f"official's; the official uses {harness.ratio(theirs['cpu'], ours['cpu'])} of "
            "snodo's server CPU per request"
        )


def orchestrate(args: argparse.Namespace) -> None:
    print(
        f"stdio: {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; window {args.window}; {args.rounds} rounds x (<= "
        f"{args.requests} requests or <= {args.seconds:g} s, after {args.warmup} warm-up "
        "requests) per process, taking turns; medians over rounds"
    )
    with tempfile.TemporaryFile("w+b") as log:
        try:
            runs = asyncio.run(_run(args, log))
        except (WrongAnswerError, OSError, ValueError) as exc:
            log.seek(0)
            raise RuntimeError(f"{exc!r}\n{log.read().decode(errors='replace')[-4000:]}") from exc
    _report(runs)


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=int, default=32, help="requests in flight")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="timed seconds, at most")
    parser.add_argument("--requests", type=int, default=20_000, help="timed requests, at most")
    parser.add_argument("--warmup", type=int, default=500, help="untimed requests first")
    parser.add_argument("--quick", action="store_true", help="a few requests: does it still run?")
    parser.add_argument("--serve", choices=["official"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.window, args.rounds, args.seconds, args.requests, args.warmup = 4, 1, 0.5, 50, 10
    if args.serve:
        serve_official()
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
