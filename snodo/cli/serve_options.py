"""The serving options ``snodo run`` and ``snodo proxy`` share, defined once so that
``snodo proxy`` takes exactly ``snodo run``'s and hands them on to it."""

from __future__ import annotations

import argparse
from typing import Final

__all__ = ["SERVE_OPTIONS", "add_serve_options"]

SERVE_OPTIONS: Final = ("--transport", "--host", "--port", "--path", "--workers", "--log-level")


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """Where and how to serve: transport, address, endpoint path, workers, log level."""
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path ('' for any path)")
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes")
    parser.add_argument("--log-level", default="warning")
