"""``snodo dev TARGET``: serve TARGET over HTTP and restart it when a source file changes.

The server runs as ``snodo run TARGET --transport http`` in a child process; the project
directory (``--watch``, the current one by default) is watched for Python files
(``watchfiles``, which uvicorn's reload uses too, in the ``snodo[http]`` extra). Each
change ends the child (SIGTERM, then SIGKILL after 5 s) and starts a new one, with one
line on stderr. A child that cannot start (a syntax error, an import that fails) prints
its error and the loop waits for the next change instead of dying. ``--inspector``
starts the MCP Inspector (pinned below) against the server when ``npx`` is there, and
prints the command to run when it is not. Ctrl-C or SIGTERM ends them all: the server
child is stopped (and waited for) before ``snodo dev`` exits, so its port is free then.
The child checks every answer against its request's revision and logs one that does
not fit (``snodo.server.answer_checks``), unless ``SNODO_CHECK_ANSWERS=0`` says not to.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from snodo.server.answer_checks import CHECK_ENV

__all__ = ["INSPECTOR", "main", "register"]

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
"""The MCP Inspector release ``--inspector`` runs (it speaks both eras)."""

EXAMPLE = """examples:
  snodo dev app.py:server
  snodo dev app.py:server --port 8001 --inspector
  snodo dev mypackage.server:server --watch src"""


def register(commands: Any) -> None:
    """Add ``dev`` to the ``snodo`` command's sub-commands."""
    dev = commands.add_parser(
        "dev",
        help="serve over HTTP, restarting when a source file changes",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dev.add_argument("target", help="module:name or path/to/file.py:name")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)
    dev.add_argument("--watch", default=".", help="the directory to watch (default: here)")
    dev.add_argument("--inspector", action="store_true", help="start the MCP Inspector too")


def say(text: str) -> None:
    """One ``snodo dev:`` line on stderr."""
    print(f"snodo dev: {text}", file=sys.stderr, flush=True)


def main(args: argparse.Namespace) -> int:
    """Run ``snodo dev`` until Ctrl-C; the exit status."""
    try:
        import watchfiles
    except ModuleNotFoundError:
        say("needs the snodo[http] extra: pip install 'snodo[http]'")
        return 1
    root = Path(args.watch).resolve()
    url = f"http://{args.host}:{args.port}/mcp"
    command = [sys.executable, "-P", "-m", "snodo", "run", args.target, "--transport", "http"]
    command += ["--host", args.host, "--port", str(args.port)]
    # SIGTERM (a service manager, a parent's kill) ends the loop as Ctrl-C does: by
    # default it would end this process alone, leaving the server holding the port.
    signal.signal(signal.SIGTERM, _interrupt)
    inspector = _inspector(url) if args.inspector else None
    # Answers checked against their revision, unless the environment says otherwise.
    env = {**os.environ, CHECK_ENV: os.environ.get(CHECK_ENV, "1")}
    child = subprocess.Popen(command, env=env)
    watcher = threading.Thread(target=_report_exit, args=(child,), daemon=True)
    watcher.start()
    say(f"serving {args.target} at {url}; watching {root} (Ctrl-C stops)")
    try:
        for changes in watchfiles.watch(root, watch_filter=watchfiles.PythonFilter()):
            changed = sorted({Path(path) for _, path in changes})
            first = changed[0].relative_to(root) if changed[0].is_relative_to(root) else changed[0]
            more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
            say(f"{first}{more} changed: restarting")
            _stop(child)
            child = subprocess.Popen(command, env=env)
            threading.Thread(target=_report_exit, args=(child,), daemon=True).start()
    except KeyboardInterrupt:
        pass
    finally:
        # Stopping is bounded (_stop kills after 5 s): a second signal must not cut it
        # short and leave the server behind.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        _stop(child)
        if inspector is not None:
            _stop(inspector)
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _report_exit(child: subprocess.Popen[bytes]) -> None:
    status = child.wait()
    if status not in (0, -15, 143):  # not the restart's own SIGTERM
        say(f"the server exited ({status}); fix it and save: it starts again")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _inspector(url: str) -> subprocess.Popen[bytes] | None:
    command = ["npx", "-y", INSPECTOR, "--transport", "http", "--server-url", url]
    if shutil.which("npx") is None:
        say("npx is not installed; with Node.js 22, run: " + " ".join(command))
        return None
    say("starting the MCP Inspector: " + " ".join(command))
    return subprocess.Popen(command)
