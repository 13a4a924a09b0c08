"""Resident memory of one worker: idle, per 1,000 listen streams, per 1,000 legacy sessions.

Run from the repository root (loopback only, no network):

    .venv/bin/python bench/memory.py [--streams 1000] [--sessions 1000] [--quick]

Servers, each one uvicorn worker (httptools, uvloop) on 127.0.0.1, both serving one
``echo`` tool with both eras on:

* **snodo**: ``HttpApp`` over a ``Server`` (legacy era on, its default), its listen
  stream and legacy session caps raised to the counts asked for (defaults: 1,000 and
  1,024);
* **official**: ``mcp`` 2.3.0 ``MCPServer.streamable_http_app()``, stateful (sessions),
  its defaults. It has ``subscriptions/listen`` (``ListenHandler``, registered by
  ``MCPServer``), so the same modern request is held open on both.

Figures are VmRSS from /proc/PID/statm, read after the server has been quiet for
``--settle`` seconds:

1. **idle**: right after startup (the port answers);
2. **warm**: after one modern ``tools/call echo`` (2026-07-28, ``_meta`` envelope);
3. **listen streams**: ``--streams`` modern ``subscriptions/listen`` requests, each on its
   own connection, each held open once its acknowledgement has arrived; the growth
   over "warm", scaled to 1,000 (a held connection is part of what a stream costs);
4. **idle connections** (for reference: what a held connection costs before any stream
   or session is on it), in a fresh process: ``--streams`` keep-alive connections, one
   modern echo on each, then left idle; the growth over "warm", scaled to 1,000;
5. **legacy sessions**: in a fresh process (so memory freed by an earlier phase cannot
   be reused), ``--sessions`` 2025-11-25 sessions opened (``initialize`` then
   ``notifications/initialized``) over 8 connections and left live; the growth over
   "warm", scaled to 1,000.

Every stream is checked (200, ``text/event-stream``, an acknowledgement first) and
every session (200 with ``Mcp-Session-Id``, 202 for ``initialized``); an echo through
one session at the end proves they still work. Memory figures do not depend on how
busy the machine is; one run is enough.
"""

import argparse
import asyncio
import contextlib
import os
import platform
import tempfile
import time
from typing import Any

import harness
from harness import Connection, HttpError, encode, header_lines

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META: dict[str, Any] = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}
BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
KINDS = ("snodo", "official")
SESSION_CONNECTIONS = 8


# -- the servers ----------------------------------------------------------------------------


def snodo_app(capacity: int) -> Any:
    from snodo.server import (  # noqa: PLC0415 - only this process needs it
        LegacyLimits,
        Limits,
        Server,
    )
    from snodo.transports.http import HttpApp  # noqa: PLC0415

    server = Server(
        "bench-memory",
        "1.0.0",
        limits=Limits(listen_streams=max(capacity + 1, 1000)),
        legacy=LegacyLimits(max_sessions=max(capacity + 1, 1024)),
    )

    @server.tool
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    return HttpApp(server, path=harness.PATH)


def official_app(capacity: int) -> Any:
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415 - the bench extra

    server = MCPServer("bench-memory", version="1.0.0")

    @server.tool()
    def echo(text: str) -> str:
        """Answer with the text."""
        return text

    return server.streamable_http_app(
        streamable_http_path=harness.PATH, max_sessions=max(capacity + 1, 10_000)
    )


# -- what the client does ---------------------------------------------------------------------


def modern_headers(method: str, name: str | None = None) -> bytes:
    headers = {**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return header_lines(headers)


async def modern_echo(port: int, held: Connection | None = None) -> None:
    """One modern echo, on ``held`` (left open) or on a connection of its own."""
    params = {"_meta": META, "name": "echo", "arguments": {"text": "warm"}}
    body = encode({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    conn = held or await Connection(port).open()
    try:
        reply = await conn.exchange(b"POST", modern_headers("tools/call", "echo"), body)
    finally:
        if held is None:
            conn.close()
    result = (reply.messages[-1] if reply.messages else {}).get("result") or {}
    if reply.status != 200 or (result.get("content") or [{}])[0].get("text") != "warm":
        raise HttpError(f"warm echo: {reply.status} {reply.messages}")


async def open_listen(port: int, number: int) -> Connection:
    """A held subscriptions/listen stream, once its acknowledgement has arrived."""
    params = {"_meta": META, "notifications": {"toolsListChanged": True}}
    body = encode(
        {"jsonrpc": "2.0", "id": number, "method": "subscriptions/listen", "params": params}
    )
    conn = await Connection(port).open()
    conn.send(b"POST", modern_headers("subscriptions/listen"), body)
    status, headers = await conn.head()
    if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
        raise HttpError(f"listen {number}: {status} {headers}")
    first = await anext(aiter(conn.events(headers)))
    if first.get("method") != "notifications/subscriptions/acknowledged":
        raise HttpError(f"listen {number}: first event {first}")
    return conn


async def open_sessions(conn: Connection, count: int, ids: list[str]) -> None:
    for number in range(count):
        initialize = {
            "jsonrpc": "2.0",
            "id": number,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "bench-memory", "version": "1.0.0"},
            },
        }
        reply = await conn.exchange(b"POST", header_lines(BASE), encode(initialize))
        session_id = reply.headers.get("mcp-session-id")
        if reply.status != 200 or not session_id:
            raise HttpError(f"initialize: {reply.status} {reply.messages}")
        headers = {**BASE, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
        note = encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
        reply = await conn.exchange(b"POST", header_lines(headers), note)
        if reply.status != 202:
            raise HttpError(f"notifications/initialized: {reply.status}")
        ids.append(session_id)


async def legacy_echo(port: int, session_id: str) -> None:
    headers = {**BASE, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": session_id}
    params = {"name": "echo", "arguments": {"text": "still here"}}
    body = encode({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
    conn = await Connection(port).open()
    try:
        reply = await conn.exchange(b"POST", header_lines(headers), body)
    finally:
        conn.close()
    result = (reply.messages[-1] if reply.messages else {}).get("result") or {}
    if reply.status != 200 or (result.get("content") or [{}])[0].get("text") != "still here":
        raise HttpError(f"echo in a live session: {reply.status} {reply.messages}")


# -- phases -----------------------------------------------------------------------------------


async def _settled_rss(pid: int, settle: float) -> int:
    await asyncio.sleep(settle)
    return harness.rss_kib(pid)


async def phase_listen(child: harness.Child, args: argparse.Namespace) -> dict[str, float]:
    idle = await _settled_rss(child.pid, args.settle)
    await modern_echo(child.port)
    warm = await _settled_rss(child.pid, args.settle)
    gate = asyncio.Semaphore(32)

    async def one(number: int) -> Connection:
        async with gate:
            return await open_listen(child.port, number)

    streams = await asyncio.gather(*(one(number) for number in range(args.streams)))
    try:
        held = await _settled_rss(child.pid, args.settle)
    finally:
        for conn in streams:
            conn.close()
    return {"idle": idle, "warm": warm, "listen": (held - warm) * 1000 / args.streams}


async def phase_connections(child: harness.Child, args: argparse.Namespace) -> dict[str, float]:
    await modern_echo(child.port)
    warm = await _settled_rss(child.pid, args.settle)
    gate = asyncio.Semaphore(32)

    async def one() -> Connection:
        async with gate:
            conn = await Connection(child.port).open()
            await modern_echo(child.port, conn)
            return conn

    conns = await asyncio.gather(*(one() for _ in range(args.streams)))
    try:
        held = await _settled_rss(child.pid, args.settle)
    finally:
        for conn in conns:
            conn.close()
    return {"connections": (held - warm) * 1000 / args.streams}


async def phase_sessions(child: harness.Child, args: argparse.Namespace) -> dict[str, float]:
    await modern_echo(child.port)
    warm = await _settled_rss(child.pid, args.settle)
    conns = [await Connection(child.port).open() for _ in range(SESSION_CONNECTIONS)]
    ids: list[str] = []
    try:
        shares = [args.sessions // SESSION_CONNECTIONS] * SESSION_CONNECTIONS
        shares[0] += args.sessions - sum(shares)
        await asyncio.gather(
            *(open_sessions(c, n, ids) for c, n in zip(conns, shares, strict=True))
        )
        live = await _settled_rss(child.pid, args.settle)
    finally:
        for conn in conns:
            conn.close()
    await legacy_echo(child.port, ids[0])
    return {"warm_sessions": warm, "sessions": (live - warm) * 1000 / args.sessions}


def _phase(kind: str, phase: str, args: argparse.Namespace, logs: Any) -> dict[str, float]:
    log = logs.enter_context(tempfile.TemporaryFile("w+b"))  # noqa: SIM115 - kept until the end
    capacity = max(args.streams, args.sessions)
    child = harness.start(__file__, kind, log, ("--capacity", str(capacity)))
    try:
        measure = {
            "listen": phase_listen,
            "connections": phase_connections,
            "sessions": phase_sessions,
        }[phase]
        result: dict[str, float] = harness.run_async(lambda: measure(child, args))
        return result
    except (HttpError, OSError, ValueError, asyncio.IncompleteReadError) as exc:
        raise RuntimeError(f"{kind} {phase}: {exc!r}\n{child.log_text()}") from exc
    finally:
        harness.stop([child.process])


def orchestrate(args: argparse.Namespace) -> None:
    import uvicorn  # noqa: PLC0415

    print(
        f"memory: {time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, uvicorn {uvicorn.__version__} --http httptools --loop uvloop, "
        f"1 worker per server; {args.streams} listen streams, {args.sessions} legacy sessions"
    )
    rows: dict[str, dict[str, float]] = {kind: {} for kind in KINDS}
    with contextlib.ExitStack() as logs:
        for index, phase in enumerate(("listen", "connections", "sessions")):
            for kind in KINDS[::-1] if index % 2 else KINDS:
                rows[kind].update(_phase(kind, phase, args, logs))
    print()
    columns = ["server", "idle RSS MiB", "after one request MiB", "per 1,000 listen streams MiB"]
    columns += ["per 1,000 legacy sessions MiB", "per 1,000 idle connections MiB"]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for kind in KINDS:
        row = rows[kind]
        print(
            f"| {kind} | {row['idle'] / 1024:.1f} | {row['warm'] / 1024:.1f} | "
            f"{row['listen'] / 1024:.2f} | {row['sessions'] / 1024:.2f} | "
            f"{row['connections'] / 1024:.2f} |"
        )
    print()
    for name, label in (
        ("idle", "idle"),
        ("warm", "after one request"),
        ("listen", "per listen stream"),
        ("sessions", "per legacy session"),
        ("connections", "per idle connection"),
    ):
        ratio = harness.ratio(rows["official"][name], rows["snodo"][name])
        print(f"official / snodo, {label}: {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000, help="listen streams held open")
    parser.add_argument("--sessions", type=int, default=1000, help="legacy sessions opened")
    parser.add_argument("--settle", type=float, default=1.0, help="quiet seconds before RSS")
    parser.add_argument("--quick", action="store_true", help="a few streams: does it still run?")
    parser.add_argument("--serve", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--capacity", type=int, default=1000, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.streams, args.sessions, args.settle = 50, 50, 0.2
    if args.serve:
        app = {"snodo": snodo_app, "official": official_app}[args.serve](args.capacity)
        harness.serve_uvicorn(app)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
