"""What a client costs: CPU per ``tools/call`` of snodo's client, the official SDK's and
FastMCP's, against the same snodo server, beside a bare client's floor.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/client_flow.py [--clients floor,snodo,official,fastmcp]
                                          [--rounds 5] [--calls 2000] [--quick]

The server is ``bench/flows.py``'s snodo app (one uvicorn worker, httptools, uvloop).
Each client runs in a process of its own, on the standard asyncio loop, and makes
``--calls`` sequential ``echo {"text": "hello, world"}`` calls over one connection
after ``--warmup`` calls, checking every answer's text; its CPU time
(``time.process_time``, all its threads) over the timed calls, divided by the calls, is
its figure. The server's CPU over the same calls (from /proc) is reported beside it.
Clients take turns, round by round, in an order that rotates; medians over rounds.

* **floor**: a bare client: the 2026-07-28 request (``_meta`` and the mirrored headers)
  as prepared bytes written on a blocking socket, the answer read by its
  ``Content-Length`` and decoded with ``json.loads``. What any client must at least do.
* **snodo**: ``Client.http(url, era="modern")``, ``call_tool``;
* **snodo-httpx**: the same client through httpx (an ``httpx.AsyncClient`` handed in, as
  a program with its own client or OAuth does), the client's transport before
  ``http11``;
* **official**: ``mcp`` 2.3.0 ``Client(url, mode="2026-07-28")``, ``call_tool``;
* **fastmcp**: FastMCP 4.2.3's ``Client(url)`` (its default negotiation), ``call_tool``,
  run with ``.venv-fastmcp``'s interpreter (skipped, and said so, when that venv is
  missing).

No timing assertions; ``--quick`` (one short round) checks that the table comes out and
that no answer was wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from flows import ECHOED, META, PATH, PROTOCOL, snodo_build

ROOT = Path(__file__).resolve().parent.parent
FASTMCP = ROOT / ".venv-fastmcp" / "bin" / "python"
CLIENTS = ("floor", "snodo", "snodo-httpx", "official", "fastmcp")


# -- the clients, each in its own process --------------------------------------------------


def floor_calls(url: str, count: int) -> int:
    """``count`` echo calls on one blocking socket; how many answers were wrong."""
    host, port = url.split("//")[1].split("/", maxsplit=1)[0].split(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    wrong = 0
    buffer = b""
    for rid in range(1, count + 1):
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": ECHOED}, "_meta": META},
            }
        ).encode()
        sock.sendall(
            b"POST %s HTTP/1.1\r\nhost: %s:%s\r\ncontent-type: application/json\r\n"
            b"accept: application/json, text/event-stream\r\nmcp-protocol-version: %s\r\n"
            b"mcp-method: tools/call\r\nmcp-name: echo\r\ncontent-length: %d\r\n\r\n%s"
            % (PATH.encode(), host.encode(), port.encode(), PROTOCOL.encode(), len(body), body)
        )
        while b"\r\n\r\n" not in buffer:
            buffer += sock.recv(65536)
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(buffer) < length:
            buffer += sock.recv(65536)
        answer, buffer = json.loads(buffer[:length]), buffer[length:]
        if answer.get("id") != rid or answer["result"]["content"][0]["text"] != ECHOED:
            wrong += 1
    sock.close()
    return wrong


async def snodo_calls(url: str, counts: tuple[int, int], httpx: bool = False) -> tuple[float, int]:
    from snodo.client import Client  # noqa: PLC0415 - the snodo client's process only
    from snodo.client.transports import HttpTransport  # noqa: PLC0415

    wrong = 0
    if httpx:
        import httpx as library  # noqa: PLC0415

        from snodo.client.transports.keepalive import resending  # noqa: PLC0415

        made = library.AsyncClient(timeout=30, transport=resending(library.AsyncHTTPTransport()))
        transport = HttpTransport(url, client=made)
    else:
        transport = HttpTransport(url)
    async with Client(transport, era="modern") as client:
        started = 0.0
        for index in range(counts[0] + counts[1]):
            if index == counts[0]:
                started = time.process_time()
            result = await client.call_tool("echo", {"text": ECHOED})
            if result.content[0].text != ECHOED or result.is_error:
                wrong += 1
        return time.process_time() - started, wrong


async def official_calls(url: str, counts: tuple[int, int]) -> tuple[float, int]:
    from mcp import Client  # noqa: PLC0415 - the official client's process only

    wrong = 0
    async with Client(url, mode=PROTOCOL) as client:
        started = 0.0
        for index in range(counts[0] + counts[1]):
            if index == counts[0]:
                started = time.process_time()
            result = await client.call_tool("echo", {"text": ECHOED})
            if result.content[0].text != ECHOED or result.is_error:  # type: ignore[union-attr]
                wrong += 1
        return time.process_time() - started, wrong


async def fastmcp_calls(url: str, counts: tuple[int, int]) -> tuple[float, int]:
    from fastmcp import Client  # noqa: PLC0415 - FastMCP's own venv only

    wrong = 0
    async with Client(url) as client:
        started = 0.0
        for index in range(counts[0] + counts[1]):
            if index == counts[0]:
                started = time.process_time()
            result = await client.call_tool("echo", {"text": ECHOED})
            if result.content[0].text != ECHOED or result.is_error:
                wrong += 1
        return time.process_time() - started, wrong


def run_client(kind: str, url: str, warmup: int, calls: int) -> None:
    """The child: print ``{"cpu": seconds, "wrong": n}`` for the timed calls."""
    if kind == "floor":
        floor_calls(url, warmup)  # its own connection: the floor keeps none between phases
        started = time.process_time()
        wrong = floor_calls(url, calls)
        cpu = time.process_time() - started
    else:
        counts = (warmup, calls)
        if kind == "snodo-httpx":
            cpu, wrong = asyncio.run(snodo_calls(url, counts, httpx=True))
        else:
            run = {"snodo": snodo_calls, "official": official_calls, "fastmcp": fastmcp_calls}
            cpu, wrong = asyncio.run(run[kind](url, counts))
    print(json.dumps({"cpu": cpu, "wrong": wrong}), flush=True)


# -- the orchestration ------------------------------------------------------------------------


def _interpreter(kind: str) -> str:
    return str(FASTMCP) if kind == "fastmcp" else sys.executable


def _measure(kind: str, server: harness.Child, args: argparse.Namespace) -> dict[str, float]:
    url = f"http://127.0.0.1:{server.port}{PATH}"
    command = [
        _interpreter(kind),
        __file__,
        "--client",
        kind,
        f"--url={url}",
        f"--calls={args.calls}",
        f"--warmup={args.warmup}",
    ]
    before = harness.proc_cpu_seconds(server.pid)
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, check=False, cwd=ROOT
    )
    server_cpu = harness.proc_cpu_seconds(server.pid) - before
    if done.returncode != 0:
        raise RuntimeError(f"the {kind} client failed:\n{done.stderr}\n{server.log_text()}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    # The server's CPU covers the warm-up calls too: counted per call over all of them.
    return {
        "client": figures["cpu"] / args.calls * 1e6,
        "server": server_cpu / (args.calls + args.warmup) * 1e6,
        "wrong": figures["wrong"],
    }


def orchestrate(args: argparse.Namespace) -> None:
    clients = [kind for kind in args.clients.split(",") if kind]
    unknown = set(clients) - set(CLIENTS)
    if unknown:
        raise SystemExit(f"unknown clients: {', '.join(sorted(unknown))}")
    if "fastmcp" in clients and not FASTMCP.exists():
        print(f"fastmcp skipped: {FASTMCP} is missing (bash -c 'source scripts/_env.sh')")
        clients.remove("fastmcp")
    print(
        f"client_flow: {time.strftime('%Y-%m-%d %H:%M')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; server: snodo ({snodo_build()}), one uvicorn worker "
        "(httptools, uvloop); clients on the standard asyncio loop"
    )
    print(
        f"{args.rounds} rounds x {args.calls} sequential echo calls per client (after "
        f"{args.warmup} warm-up calls), one process per client and round, turns rotating; "
        "medians over rounds"
    )
    with tempfile.TemporaryFile("w+b") as log:
        server = harness.start(__file__, "snodo", log)
        try:
            runs: dict[str, list[dict[str, float]]] = {kind: [] for kind in clients}
            for round_index in range(args.rounds):
                shift = round_index % len(clients)
                for kind in clients[shift:] + clients[:shift]:
                    runs[kind].append(_measure(kind, server, args))
        finally:
            harness.stop([server.process])
    figures = _report(runs)
    if args.json:
        Path(args.json).write_text(json.dumps({"client": figures}))


def _report(runs: dict[str, list[dict[str, float]]]) -> dict[str, float]:
    """Print the table; return each client's median CPU µs per call."""
    client = {kind: statistics.median(r["client"] for r in rows) for kind, rows in runs.items()}
    server = {kind: statistics.median(r["server"] for r in rows) for kind, rows in runs.items()}
    print()
    print(
        "| client | client CPU µs per call | x official | x floor | server CPU µs per call "
        "| wrong answers |"
    )
    print("|---|---|---|---|---|---|")
    for kind, rows in runs.items():
        official = harness.ratio(client[kind], client["official"]) if "official" in client else "-"
        floor = harness.ratio(client[kind], client["floor"]) if "floor" in client else "-"
        wrong = sum(int(r["wrong"]) for r in rows)
        print(
            f"| {kind} | {client[kind]:.1f} | {official} | {floor} | {server[kind]:.1f} | {wrong} |"
        )
    return client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke test)")
    parser.add_argument("--serve", choices=("snodo",), help=argparse.SUPPRESS)
    parser.add_argument("--client", choices=CLIENTS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)  # bench/speed.py's figures
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.calls, args.warmup = 1, 50, 10
    if args.serve:
        from flows import snodo_app  # noqa: PLC0415 - the server's process only

        harness.serve_uvicorn(snodo_app())
    elif args.client:
        run_client(args.client, args.url, args.warmup, args.calls)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
