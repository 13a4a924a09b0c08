"""The bounds ``snodo run --transport http`` adds to uvicorn's protocols
(``snodo.transports.http_guard``): their options, and handing them to every worker."""

from __future__ import annotations

import argparse

__all__ = ["add_limit_options", "export_limits"]

HEAD_TIMEOUT_SECONDS = 10.0
BODY_TIMEOUT_SECONDS = 30.0
MAX_PER_ADDRESS = 64
MAX_HEADER_LINE = 8192


def add_limit_options(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--head-timeout",
        metavar="SECONDS",
        type=float,
        default=HEAD_TIMEOUT_SECONDS,
        help="seconds a client has to send a request head (408 beyond; default: %(default)s)",
    )
    run.add_argument(
        "--body-timeout",
        metavar="SECONDS",
        type=float,
        default=BODY_TIMEOUT_SECONDS,
        help="seconds a client has to send a request body (closed beyond; default: %(default)s)",
    )
    run.add_argument(
        "--limit-per-address",
        metavar="N",
        type=int,
        default=MAX_PER_ADDRESS,
        help="connections one client address may hold per worker (503 beyond; default:"
        " %(default)s)",
    )
    run.add_argument(
        "--max-header-line",
        metavar="BYTES",
        type=int,
        default=MAX_HEADER_LINE,
        help="bytes of the request line or one header line (431 beyond; default: %(default)s)",
    )


def export_limits(args: argparse.Namespace) -> str:
    """Put the limits where the guarded protocol reads them when it is imported, in this
    process or a worker's; the uvicorn ``http`` option that serves with them."""
    from snodo.transports.http_guard import GuardLimits, guarded, install

    try:
        limits = GuardLimits(
            head_timeout=args.head_timeout,
            body_timeout=args.body_timeout,
            max_per_address=args.limit_per_address,
            max_line=args.max_header_line,
        )
    except ValueError as exc:
        raise SystemExit(f"snodo: {exc}") from None
    install(limits)
    return guarded(args.http)
