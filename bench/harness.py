"""What the legacy, memory and stdio benchmarks share: processes, /proc figures, HTTP.

Not a benchmark itself. ``legacy_flow.py``, ``memory.py`` and ``stdio.py`` import it
(run from the repository root, ``bench/`` is first on ``sys.path``):

* server processes: each script re-runs itself with ``--serve KIND``; the child binds a
  free 127.0.0.1 port, prints ``PORT n`` and serves one uvicorn worker (httptools,
  uvloop), or several (``workers=N`` with an import string, once every worker serves);
  ``stop`` ends only the processes a script started, by their own handles;
* figures from ``/proc/PID``: CPU seconds (utime+stime), of a process alone or with its
  descendants (a uvicorn supervisor and its workers), and resident memory (VmRSS);
* a small HTTP/1.1 client on asyncio streams that reads ``Content-Length`` and chunked
  bodies and splits ``text/event-stream`` bodies into JSON-RPC messages, so a load
  generator can follow a legacy session (session header, SSE answers, a server request
  in the middle of a call) without a client library measuring itself.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import IO, Any

PATH = "/mcp"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a process, from /proc/PID/stat (fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (children, their children...), from
    /proc/PID/task/TID/children; empty where the kernel does not list them."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as children:
                listed = [int(child) for child in children.read().split()]
        except OSError:
            continue
        for child in listed:
            found += [child, *descendants(child)]
    return found


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds of ``pids`` together; one that has exited counts nothing."""
    total = 0.0
    for pid in pids:
        try:
            total += proc_cpu_seconds(pid)
        except OSError:
            continue
    return total


def rss_kib(pid: int) -> int:
    """Resident memory of a process in KiB (the second field of /proc/PID/statm)."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_KIB


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(numerator: float, denominator: float) -> str:
    """``x1.23``; a run too short for the clock tick (``--quick``) can measure 0 CPU."""
    return f"x{numerator / denominator:.2f}" if denominator else "n/a (too short to measure)"


# -- server processes -------------------------------------------------------------------


def serve_uvicorn(app: Any, **options: Any) -> None:
    """Serve ``app`` with one uvicorn worker on a free loopback port; print the port.

    ``options`` override the uvicorn settings below (a server served as its own entry
    point serves it, such as the official SDK's proxy headers). With ``workers=N`` above
    1, ``app`` must be an import string (each worker is a spawned process that imports
    it; ``factory=True`` for a function that builds the app): this process supervises
    them, as ``uvicorn --workers N`` does, and prints the port once every worker serves."""
    import uvicorn  # noqa: PLC0415 - only server processes need it

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)  # connections queue here until uvicorn's loop accepts them
    settings: dict[str, Any] = {
        "http": "httptools",
        "loop": "uvloop",
        "lifespan": "on",
        "log_level": "warning",
        "access_log": False,
        "workers": 1,
        "proxy_headers": False,  # all servers alike; nothing here sits behind a proxy
        "timeout_keep_alive": 600,  # idle listen streams and sessions must outlive a phase
    }
    config = uvicorn.Config(app, **{**settings, **options})
    if config.workers > 1:
        _serve_workers(config, sock)
        return
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


def _serve_workers(config: Any, sock: socket.socket) -> None:
    """Supervise ``config.workers`` spawned workers sharing ``sock``, as uvicorn does."""
    from uvicorn.supervisors import Multiprocess  # noqa: PLC0415 - server processes only

    if not isinstance(config.app, str):
        raise TypeError("uvicorn workers > 1 need the app as an import string")

    class Supervisor(Multiprocess):
        def init_processes(self) -> None:
            super().init_processes()
            for process in self.processes:
                ready = getattr(process, "wait_until_ready", None)  # recent uvicorn only
                if ready is None:
                    time.sleep(3)
                elif not ready(120):
                    self.terminate_all()
                    self.join_all()
                    raise SystemExit(f"uvicorn worker {process.pid} did not start")
            print(f"PORT {sock.getsockname()[1]}", flush=True)

    Supervisor(config, sockets=[sock]).run()


@dataclass
class Child:
    """A server process this run started."""

    kind: str
    process: subprocess.Popen[bytes]
    port: int
    log: IO[bytes]

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_text(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]


def load(
    script: str, child: Child, options: list[str], timeout: float, what: str | None = None
) -> dict[str, Any]:
    """Run ``script --load`` against ``child`` in a process of its own (the load generator,
    with ``options``) and return the figures it wrote; RuntimeError with both sides' output
    when it failed (``what`` names the case, else the server's kind)."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as out:
        command = [sys.executable, script, "--load", f"--out={out.name}", *options]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"load generator failed on {what or child.kind}:\n{done.stderr}\n{child.log_text()}"
            )
        result: dict[str, Any] = json.load(out)
    return result


def start(
    script: str,
    kind: str,
    log: IO[bytes],
    extra: tuple[str, ...] = (),
    python: str = sys.executable,
) -> Child:
    """Run ``script --serve kind`` (with ``python``, another venv's interpreter say) and
    wait for its ``PORT n`` line."""
    process = subprocess.Popen(
        [python, script, "--serve", kind, *extra], stdout=subprocess.PIPE, stderr=log
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("PORT "):
        process.kill()
        process.wait()
        log.seek(0)
        raise RuntimeError(f"{kind} server did not start: {line!r}\n{log.read().decode()}")
    return Child(kind, process, int(line.split()[1]), log)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """Stop the processes this run started (by their own handles, nothing else)."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


# -- a small HTTP/1.1 client -------------------------------------------------------------


class HttpError(Exception):
    """A response the benchmark cannot use: its timings would be worthless."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    messages: list[dict[str, Any]] = field(default_factory=list)


class Connection:
    """One keep-alive connection to 127.0.0.1, one request at a time."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.host = f"127.0.0.1:{port}".encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> Connection:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def send(self, method: bytes, headers: bytes, body: bytes = b"") -> None:
        """Write one request; ``headers`` are complete ``Name: value\\r\\n`` lines."""
        assert self.writer is not None
        self.writer.write(
            b"%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: %d\r\n\r\n%s"
            % (method, PATH.encode(), self.host, headers, len(body), body)
        )

    async def head(self) -> tuple[int, dict[str, str]]:
        assert self.reader is not None
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        return status, headers

    async def chunks(self, headers: dict[str, str]) -> AsyncIterator[bytes]:
        """The body as it arrives (Content-Length or chunked)."""
        assert self.reader is not None
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")  # no trailers are sent
                    return
                data = await self.reader.readexactly(size + 2)
                yield data[:-2]
        else:
            length = int(headers.get("content-length", "0"))
            if length:
                yield await self.reader.readexactly(length)

    async def events(self, headers: dict[str, str]) -> AsyncIterator[dict[str, Any]]:
        """JSON-RPC messages of the body: one JSON document, or SSE ``data`` events."""
        if not headers.get("content-type", "").startswith("text/event-stream"):
            body = b"".join([chunk async for chunk in self.chunks(headers)])
            if body:
                yield json.loads(body)
            return
        buffer = b""
        async for chunk in self.chunks(headers):
            buffer = (buffer + chunk).replace(b"\r\n", b"\n")
            while (end := buffer.find(b"\n\n")) >= 0:
                event, buffer = buffer[:end], buffer[end + 2 :]
                data = [line[5:].lstrip() for line in event.split(b"\n") if line[:5] == b"data:"]
                if data and b"".join(data).strip():
                    yield json.loads(b"\n".join(data))

    async def exchange(self, method: bytes, headers: bytes, body: bytes = b"") -> Response:
        """One request, the whole response read."""
        self.send(method, headers, body)
        status, response_headers = await self.head()
        response = Response(status, response_headers)
        async for message in self.events(response_headers):
            response.messages.append(message)
        return response


def header_lines(headers: dict[str, str]) -> bytes:
    return "".join(f"{name}: {value}\r\n" for name, value in headers.items()).encode()


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def run_async(main: Callable[[], Any]) -> Any:
    """Run a coroutine function on uvloop (the load generators' loop)."""
    import uvloop  # noqa: PLC0415

    return uvloop.run(main())
