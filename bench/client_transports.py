"""The candidates for the client's HTTP transport, alone: CPU per request over plain
HTTP and over TLS, against the same snodo server.

Run from the repository root (loopback only, no network; TLS needs ``openssl``):

    .venv/bin/python bench/client_transports.py [--candidates http11,httpcore,h11,httpx,aiohttp]
        [--rounds 5] [--requests 2000] [--aiohttp-python PATH] [--quick]

Each candidate, in a process of its own on the standard asyncio loop, sends
``--requests`` sequential POSTs of the same 2026-07-28 ``tools/call`` echo (the same
head: content type, accept, the mirrored ``Mcp-*`` headers) on one kept-alive
connection, reads each answer whole, decodes it with ``json.loads`` and checks its text;
its CPU (``time.process_time``) over the timed requests, per request, is its figure.
The server is ``bench/flows.py``'s snodo app (one uvicorn worker, httptools, uvloop),
served twice: over plain HTTP and over TLS with a self-signed certificate the clients
are told to trust. Candidates take turns, rotating; medians over rounds.

* **http11**: ``snodo.client.transports.http11`` (asyncio protocol, httptools parser,
  a stack of idle connections);
* **httpcore**: httpcore 1.x's ``AsyncConnectionPool`` used directly (its h11 parser);
* **h11**: a small client on asyncio streams with h11's state machine;
* **httpx**: ``httpx.AsyncClient`` (httpcore below it), the client's transport before;
* **aiohttp**: ``aiohttp.ClientSession``, run with ``--aiohttp-python`` (an interpreter
  that has aiohttp; snodo does not depend on it): skipped, and said so, when that
  interpreter lacks it.

No timing assertions; ``--quick`` (one short round) checks that the table comes out and
that no answer was wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness
from flows import ECHOED, META, PATH, PROTOCOL

CANDIDATES = ("http11", "httpcore", "h11", "httpx", "aiohttp")
HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL,
    "mcp-method": "tools/call",
    "mcp-name": "echo",
}


def _body(rid: int) -> bytes:
    params = {"name": "echo", "arguments": {"text": ECHOED}, "_meta": META}
    message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def _wrong(raw: bytes, rid: int) -> int:
    answer = json.loads(raw)
    return int(answer.get("id") != rid or answer["result"]["content"][0]["text"] != ECHOED)


# -- the candidates, each a coroutine making ``count`` requests from ``first`` ----------------


async def run_http11(url: str, tls: ssl.SSLContext | None, ids: range) -> int:
    from snodo.client.transports.http11 import Origin  # noqa: PLC0415

    origin = Origin(url, tls=tls)
    wrong = 0
    for rid in ids:
        answer = await origin.open("POST", HEADERS, _body(rid))
        raw = b"".join([chunk async for chunk in answer.chunks()])
        await answer.aclose()
        wrong += _wrong(raw, rid)
    await origin.aclose()
    return wrong


async def run_httpcore(url: str, tls: ssl.SSLContext | None, ids: range) -> int:
    import httpcore  # noqa: PLC0415

    wrong = 0
    async with httpcore.AsyncConnectionPool(ssl_context=tls) as pool:
        for rid in ids:
            response = await pool.request("POST", url, headers=HEADERS, content=_body(rid))
            wrong += _wrong(response.content, rid)
    return wrong


async def run_httpx(url: str, tls: ssl.SSLContext | None, ids: range) -> int:
    import httpx  # noqa: PLC0415

    wrong = 0
    async with httpx.AsyncClient(verify=tls or True) as client:
        for rid in ids:
            response = await client.post(url, content=_body(rid), headers=HEADERS)
            wrong += _wrong(response.content, rid)
    return wrong


async def run_h11(url: str, tls: ssl.SSLContext | None, ids: range) -> int:
    import h11  # noqa: PLC0415

    host, port = url.split("//")[1].split("/", maxsplit=1)[0].split(":")
    reader, writer = await asyncio.open_connection(host, int(port), ssl=tls)
    connection = h11.Connection(h11.CLIENT)
    wrong = 0
    for rid in ids:
        body = _body(rid)
        headers = [("host", f"{host}:{port}"), *HEADERS.items()]
        headers.append(("content-length", str(len(body))))
        writer.write(connection.send(h11.Request(method="POST", target=PATH, headers=headers)))
        writer.write(connection.send(h11.Data(data=body)))
        writer.write(connection.send(h11.EndOfMessage()))
        raw = b""
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await reader.read(65536))
            elif isinstance(event, h11.Data):
                raw += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
        connection.start_next_cycle()
        wrong += _wrong(raw, rid)
    writer.close()
    return wrong


async def run_aiohttp(url: str, tls: ssl.SSLContext | None, ids: range) -> int:
    import aiohttp  # noqa: PLC0415

    wrong = 0
    async with aiohttp.ClientSession() as session:
        for rid in ids:
            async with session.post(
                url, data=_body(rid), headers=HEADERS, ssl=tls if tls is not None else True
            ) as response:
                wrong += _wrong(await response.read(), rid)
    return wrong


RUNS = {
    "http11": run_http11,
    "httpcore": run_httpcore,
    "h11": run_h11,
    "httpx": run_httpx,
    "aiohttp": run_aiohttp,
}


def run_candidate(kind: str, url: str, cafile: str | None, warmup: int, count: int) -> None:
    """The child: print ``{"cpu": seconds, "wrong": n}`` for the timed requests."""
    tls = ssl.create_default_context(cafile=cafile) if cafile else None

    async def main() -> tuple[float, int]:
        await RUNS[kind](url, tls, range(1, warmup + 1))
        started = time.process_time()
        wrong = await RUNS[kind](url, tls, range(1, count + 1))
        return time.process_time() - started, wrong

    # Each run on one connection: the warm-up's is closed, the timed one opens its own
    # (one connect and, over TLS, one handshake in ``count`` requests).
    cpu, wrong = asyncio.run(main())
    print(json.dumps({"cpu": cpu, "wrong": wrong}), flush=True)


# -- the orchestration ------------------------------------------------------------------------


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def _has_aiohttp(python: str) -> bool:
    done = subprocess.run([python, "-c", "import aiohttp"], capture_output=True, check=False)
    return done.returncode == 0


def _measure(kind: str, url: str, cafile: str | None, args: argparse.Namespace) -> dict[str, float]:
    python = args.aiohttp_python if kind == "aiohttp" else sys.executable
    command = [python, __file__, "--candidate", kind, f"--url={url}"]
    command += [f"--requests={args.requests}", f"--warmup={args.warmup}"]
    if cafile:
        command.append(f"--cafile={cafile}")
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} failed on {url}:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {"cpu": figures["cpu"] / args.requests * 1e6, "wrong": figures["wrong"]}


def orchestrate(args: argparse.Namespace) -> None:
    candidates = [kind for kind in args.candidates.split(",") if kind]
    if "aiohttp" in candidates and not _has_aiohttp(args.aiohttp_python):
        print(f"aiohttp skipped: {args.aiohttp_python} cannot import it (--aiohttp-python)")
        candidates.remove("aiohttp")
    secure = shutil.which("openssl") is not None
    print(
        f"client_transports: {time.strftime('%Y-%m-%d %H:%M')}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; server: snodo, one uvicorn "
        f"worker (httptools, uvloop); {args.rounds} rounds x {args.requests} sequential "
        f"requests per candidate (after {args.warmup}), turns rotating; medians over rounds"
    )
    if not secure:
        print("TLS skipped: openssl is not installed")
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryFile("w+b") as log:
        servers: list[harness.Child] = []
        try:
            plain = harness.start(__file__, "plain", log)
            servers.append(plain)
            schemes = [("http", f"http://127.0.0.1:{plain.port}{PATH}", None)]
            if secure:
                cert, key = _certificate(Path(folder))
                tls = harness.start(__file__, "tls", log, ("--cert", str(cert), "--key", str(key)))
                servers.append(tls)
                schemes.append(("https", f"https://127.0.0.1:{tls.port}{PATH}", str(cert)))
            for round_index in range(args.rounds):
                shift = round_index % len(candidates)
                for kind in candidates[shift:] + candidates[:shift]:
                    for scheme, url, cafile in schemes:
                        runs.setdefault((kind, scheme), []).append(
                            _measure(kind, url, cafile, args)
                        )
        finally:
            harness.stop([server.process for server in servers])
    _report(runs, candidates, [scheme for scheme, _, _ in schemes])


def _report(
    runs: dict[tuple[str, str], list[dict[str, float]]], candidates: list[str], schemes: list[str]
) -> None:
    cpu = {key: statistics.median(r["cpu"] for r in rows) for key, rows in runs.items()}
    print()
    columns = " | ".join(f"{scheme} CPU µs per request | {scheme} x httpx" for scheme in schemes)
    print(f"| candidate | {columns} | wrong answers |")
    print("|---" * (1 + 2 * len(schemes)) + "|---|")
    for kind in candidates:
        cells = []
        for scheme in schemes:
            base = cpu.get(("httpx", scheme))
            cells.append(f"{cpu[(kind, scheme)]:.1f}")
            cells.append(harness.ratio(cpu[(kind, scheme)], base) if base else "-")
        wrong = sum(int(r["wrong"]) for s in schemes for r in runs[(kind, s)])
        print(f"| {kind} | {' | '.join(cells)} | {wrong} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", default=",".join(CANDIDATES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--aiohttp-python", default=sys.executable)
    parser.add_argument("--quick", action="store_true", help="one short round (a smoke test)")
    parser.add_argument("--serve", choices=("plain", "tls"), help=argparse.SUPPRESS)
    parser.add_argument("--cert", help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    parser.add_argument("--candidate", choices=CANDIDATES, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--cafile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.requests, args.warmup = 1, 50, 10
    if args.serve:
        from flows import snodo_app  # noqa: PLC0415 - the server's process only

        options: dict[str, Any] = {}
        if args.serve == "tls":
            options = {"ssl_certfile": args.cert, "ssl_keyfile": args.key}
        harness.serve_uvicorn(snodo_app(), **options)
    elif args.candidate:
        run_candidate(args.candidate, args.url, args.cafile, args.warmup, args.requests)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
