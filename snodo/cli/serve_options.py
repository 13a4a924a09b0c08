"""The serving options ``snodo run`` and ``snodo proxy`` share, defined once so that
``snodo proxy`` takes exactly ``snodo run``'s and hands them on to it."""

from __future__ import annotations

import argparse
from typing import Final

__all__ = ["GRACEFUL_SECONDS", "SERVE_OPTIONS", "add_serve_options"]

SERVE_OPTIONS: Final = (
    "--transport",
    "--host",
    "--port",
    "--path",
    "--workers",
    "--log-level",
    "--graceful-timeout",
    "--token-file",
)
GRACEFUL_SECONDS: Final = 10.0
"""How long a stop signal lets what is running finish before it is cancelled."""


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """Where and how to serve: transport, address, endpoint path, workers, log level,
    the tokens an HTTP request must carry, and how long a stop signal waits for what
    is running."""
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path ('' for any path)")
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes")
    parser.add_argument(
        "--unshared-legacy-sessions",
        action="store_true",
        help="with --workers: start even though legacy sessions stay in each worker's"
        " memory (refused otherwise: a legacy client's requests may reach any worker)",
    )
    parser.add_argument(
        "--unshared-replay-guard",
        action="store_true",
        help="with --workers: start even though a handler that asks the client has a replay"
        " guard of each worker's own (refused otherwise: a replayed retry may reach another)",
    )
    parser.add_argument("--log-level", default="warning")
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="HTTP: bearer tokens a request must carry one of, one a line (the file"
        " readable by you alone)",
    )
    parser.add_argument(
        "--graceful-timeout",
        metavar="SECONDS",
        type=_seconds,
        default=GRACEFUL_SECONDS,
        help="after SIGTERM or SIGINT, seconds the requests in flight get to finish before"
        " they are cancelled; a second signal stops at once (default: %(default)s)",
    )


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value
