"""``snodo run TARGET`` serves a Server object, like ``uvicorn module:app`` serves an app.

TARGET is ``package.module:name`` or ``path/to/file.py:name``; the name may also be a
function that returns the Server. Without ``:name``, the
module's only ``Server`` is served. ``snodo list`` and ``snodo
call`` are a terminal client (``client_commands``, with ``terminal`` asking the person),
``snodo install`` adds a server to a host's configuration (``install``), ``snodo dev``
serves one and restarts it on every change (``dev``), ``snodo auth`` signs in to an
OAuth-protected one and keeps the tokens (``sign_in``), ``snodo card``, ``server-json``
and ``bundle`` publish one (``publish_commands``).

The command line is the top of the house: it may import any package, and none imports
it (``python -m snodo`` runs it). ``observer`` builds the OpenTelemetry observer from
the ``OTEL_*`` variables.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import secrets
import sys
from pathlib import Path
from typing import Any

from snodo.cli import client_commands, dev, install, proxy_command, publish_commands, sign_in
from snodo.cli.http_limits import add_limit_options, export_limits
from snodo.cli.serve_options import add_serve_options
from snodo.cli.state_inspect import inspect_command, inspect_token
from snodo.cli.targets import check_exists, load
from snodo.cli.worker_checks import unshared_guard, unshared_legacy, unshared_sign_ins
from snodo.core.state.keyring import SECRET_ENV, environment_secret
from snodo.server import Server

__all__ = ["inspect_token", "load", "main"]

TARGET_ENV = "SNODO_TARGET"
PATH_ENV = "SNODO_HTTP_PATH"
HOSTS_ENV = "SNODO_ALLOWED_HOSTS"
ORIGINS_ENV = "SNODO_ALLOWED_ORIGINS"
REQUEST_LOG_ENV = "SNODO_REQUEST_LOG"
BESIDE_ENV = "SNODO_HTTP_BESIDE"
"""CORS origins and probe paths, as JSON, for ``--workers`` (``_beside``)."""

# What `snodo run --transport http` asks of uvicorn; the bounds its parsers lack (read
# time, connections per address, header lines) are snodo's own (``http_limits``).
KEEP_ALIVE_SECONDS = 5.0
"""Idle keep-alive connections close after this (uvicorn's own default, stated)."""
MAX_CONNECTIONS = 1000
"""Per worker; beyond it uvicorn answers 503 instead of queueing without bound."""
H11_MAX_INCOMPLETE_EVENT_BYTES = 16 * 1024
"""h11's own default: a request head larger than this is refused with 431."""


def _plain_server(target: str) -> Server:
    found = load(target)
    if not isinstance(found, Server) and callable(found) and not _is_asgi_app(found):
        found = found()
    if _is_asgi_app(found):
        module = target.rpartition(":")[0]
        raise SystemExit(
            f"snodo: {target} is an ASGI app (a web framework's), not a snodo Server: name"
            f" the Server it mounts ({module}:server), or serve the app with uvicorn"
        )
    if not isinstance(found, Server):
        raise SystemExit(
            f"snodo: {target} is a {type(found).__name__}, not a snodo Server (or a"
            " function returning one)"
        )
    return found


def _is_asgi_app(found: object) -> bool:
    """Whether ``found`` is called as an ASGI app is (scope, receive, send), which a
    Server factory is not: a FastAPI or Starlette app named where a Server belongs."""
    import inspect

    if isinstance(found, Server) or not callable(found):
        return False
    try:
        parameters = inspect.signature(found).parameters
    except (TypeError, ValueError):
        return False
    return list(parameters)[:3] == ["scope", "receive", "send"]


def _server(target: str) -> Server:
    found = _plain_server(target)
    from snodo.cli.observer import observer_from_environment

    # OTEL_* variables (and --request-log) turn on observing, in each worker alike.
    observer = observer_from_environment(
        str(found.info["name"]), os.environ.get(REQUEST_LOG_ENV) == "1"
    )
    if observer is not None:
        found.observer = observer
    return found


def _app(target: str, path: str, hosts: str, origins: str, beside: str = "{}") -> Any:
    from snodo.gateway.front import GATEWAYS, knowing_peers
    from snodo.transports.http import LOCAL_HOSTS, HttpApp

    allowed = [h for h in hosts.split(",") if h]
    extra = json.loads(beside)
    server = _server(target)
    tokens = extra.get("token_file")
    if tokens and server.authorization is not None:
        raise SystemExit(
            f"snodo: {target} is protected with OAuth (authorization=): --token-file would"
            " be a second way in; give one of them"
        )
    from snodo.cli.token_file import token_file

    try:
        authenticate = token_file(tokens) if tokens else None
    except ValueError as exc:
        raise SystemExit(f"snodo: {exc}") from None
    if extra.get("card_name"):
        server.card_name = extra["card_name"]
    try:
        app = HttpApp(
            server,
            path=path or None,
            allowed_hosts=None if "*" in allowed else [*LOCAL_HOSTS, *allowed],
            allowed_origins=[o for o in origins.split(",") if o] or None,
            cors_origins=extra.get("cors_origins", ()),
            health_path=extra.get("health_path"),
            ready_path=extra.get("ready_path"),
            authenticate=authenticate,
            card_url=extra.get("card_url"),
            catalog=bool(extra.get("ai_catalog")),
        )
    except ValueError as exc:  # a card the server cannot have, options that clash
        raise SystemExit(f"snodo: {exc}") from None
    # A proxy's front clients each get a share of the backend calls it holds, told
    # apart by address where they have no principal (snodo.gateway.front).
    return knowing_peers(app) if server in GATEWAYS else app


def _beside(args: argparse.Namespace) -> str:
    """What ``snodo run`` serves beside the endpoint: CORS origins, the probes' paths,
    the Server Card and the AI Catalog."""
    return json.dumps(
        {
            "cors_origins": args.cors_origin,
            "health_path": args.health_path or None,
            "ready_path": args.ready_path or None,
            "token_file": str(Path(args.token_file).resolve()) if args.token_file else None,
            "card_name": args.card_name,
            "card_url": args.card_url,
            "ai_catalog": args.ai_catalog,
        }
    )


def http_app() -> Any:
    """uvicorn factory for ``--workers``: each worker process loads the target anew."""
    return _app(
        os.environ[TARGET_ENV],
        os.environ.get(PATH_ENV, ""),
        os.environ.get(HOSTS_ENV, ""),
        os.environ.get(ORIGINS_ENV, ""),
        os.environ.get(BESIDE_ENV, "{}"),
    )


def build() -> str:
    """Which build of snodo is installed: ``compiled (N extension modules)`` when the
    request path is C extensions (the compiled wheel), else ``pure Python``."""
    package = Path(__file__).resolve().parents[1]
    extensions = [path for path in package.rglob("*.so") if path.is_file()]
    if not extensions:
        return "pure Python"
    return f"compiled ({len(extensions)} extension modules)"


def _version() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("snodo")
    except PackageNotFoundError:
        release = "(not installed: a checkout)"
    where = f"Python {platform.python_version()}, {platform.system()} {platform.machine()}"
    print(f"snodo {release}, {build()}; {where}")
    return 0


def _announce(args: argparse.Namespace) -> None:
    """The one line ``snodo run --transport http`` prints: where it serves."""
    host = f"[{args.host}]" if ":" in args.host else args.host
    where = f"http://{host}:{args.port}{args.path or '/'}" + ("" if args.path else " (any path)")
    workers = f", {args.workers} workers" if args.workers > 1 else ""
    served = proxy_command.shown(args.target)  # a proxy names its backend
    print(f"snodo: {served} at {where}{workers}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="snodo", description="Serve a snodo MCP server, or call any MCP server."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="serve a Server object",
        epilog="examples:\n  snodo run app.py:server\n"
        "  snodo run app.py:server --transport http --port 8000 --workers 4",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "target", help="module:name or path/to/file.py:name (without :name, its only Server)"
    )
    add_serve_options(run)
    run.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="a Host name served besides localhost (repeat; '*' turns the check off)",
    )
    run.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        help="a browser Origin allowed (repeat); default: the allowed hosts' own origins",
    )
    run.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a browser origin answered with CORS headers (repeat; allowed as --allow-origin)",
    )
    run.add_argument(
        "--health-path",
        default="/healthz",
        help="liveness probe, always 200 (default: %(default)s; '' for none)",
    )
    run.add_argument(
        "--ready-path",
        default="/readyz",
        help="readiness probe: 503 while a configured Redis is unreachable (default:"
        " %(default)s; '' for none)",
    )
    run.add_argument(
        "--card-name",
        metavar="NAMESPACE/NAME",
        help="serve the server's Server Card at <endpoint>/server-card under this name",
    )
    run.add_argument(
        "--card-url",
        metavar="URL",
        help="the endpoint's public URL, for the card (default: as each request reached it)",
    )
    run.add_argument(
        "--ai-catalog",
        action="store_true",
        help="with a card: list it in /.well-known/ai-catalog.json",
    )
    run.add_argument(
        "--timeout-keep-alive",
        metavar="SECONDS",
        type=float,
        default=KEEP_ALIVE_SECONDS,
        help="seconds an idle HTTP connection stays open (default: %(default)s)",
    )
    run.add_argument(
        "--limit-concurrency",
        metavar="N",
        type=int,
        default=MAX_CONNECTIONS,
        help="connections and tasks per worker before new ones get 503 (default: %(default)s)",
    )
    add_limit_options(run)
    run.add_argument(
        "--http",
        choices=["auto", "h11", "httptools"],
        default="auto",
        help="uvicorn's HTTP/1.1 parser (default: %(default)s; h11 bounds header size)",
    )
    run.add_argument(
        "--h11-max-incomplete-event-size",
        metavar="BYTES",
        type=int,
        default=H11_MAX_INCOMPLETE_EVENT_BYTES,
        help="with --http h11: most bytes of a request head (default: %(default)s)",
    )
    run.add_argument(
        "--proxy-headers",
        action="store_true",
        help="trust X-Forwarded-For/-Proto from --forwarded-allow-ips (behind a proxy only)",
    )
    run.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        default=None,
        help="with --proxy-headers: the proxies trusted (default: uvicorn's, 127.0.0.1)",
    )
    run.add_argument(
        "--request-log",
        action="store_true",
        help="one JSON line per request on stderr, with trace ids (needs snodo[otel])",
    )
    state_command = commands.add_parser("state", help="request state tools for operators")
    state_commands = state_command.add_subparsers(dest="state_command", required=True)
    inspect = state_commands.add_parser(
        "inspect",
        help="print a token's readable fields and why it would be refused",
        epilog="example:\n  snodo state inspect TOKEN --keys keys.txt --request retry.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inspect.add_argument("token")
    inspect.add_argument("--keys", help="keyring file, one kid:hex-secret a line")
    inspect.add_argument("--request", help="the retry's JSON-RPC request (JSON file)")
    inspect.add_argument("--principal", help="the principal the retry came from")
    commands.add_parser("version", help="the installed release, and whether it is compiled")
    client_commands.register(commands)
    sign_in.register(commands)
    proxy_command.register(commands)
    install.register(commands)
    dev.register(commands)
    publish_commands.register(commands)
    words = sys.argv[1:] if argv is None else list(argv)
    args, unknown = parser.parse_known_args(words)
    if getattr(args, "reparse", None) is not None:
        # A command whose options may come between its words: parsed again, intermixed
        # (argparse alone stops taking positionals after the first option).
        rest = words[words.index(args.command) + 1 :]
        args = args.reparse(rest, argparse.Namespace(command=args.command))
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command == "state":
        return inspect_command(args)
    if args.command == "version":
        return _version()
    if args.command in ("list", "call"):
        return client_commands.main(args)
    if args.command == "auth":
        return sign_in.main(args)
    if args.command == "install":
        return install.main(args)
    if args.command == "proxy":
        return proxy_command.main(args, main)
    if args.command == "dev":
        return dev.main(args)
    if args.command in publish_commands.COMMANDS:
        return publish_commands.main(args, _plain_server)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    if args.request_log:
        os.environ[REQUEST_LOG_ENV] = "1"
    if args.transport == "stdio":
        if args.token_file:
            raise SystemExit("snodo: --token-file is for --transport http (stdio has no tokens)")
        from snodo.server.lifespan import StartupFailed
        from snodo.transports.stdio import serve_stdio

        try:
            asyncio.run(serve_stdio(_server(args.target), grace=args.graceful_timeout))
        except StartupFailed as exc:  # a lifespan failed: one line, and a non-zero exit
            print(f"snodo: the server did not start: {exc}", file=sys.stderr)
            return 1
        return 0
    try:
        import uvicorn
    except ModuleNotFoundError as exc:
        if exc.name != "uvicorn":
            raise
        raise SystemExit(
            "snodo: --transport http needs the snodo[http] extra: pip install 'snodo[http]'"
        ) from None

    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "access_log": False,
        "timeout_keep_alive": args.timeout_keep_alive,
        "limit_concurrency": args.limit_concurrency,
        "http": export_limits(args),  # uvicorn's protocol with snodo's bounds
        "h11_max_incomplete_event_size": args.h11_max_incomplete_event_size,
        # Off unless asked: snodo reads neither the client address nor the scheme, so
        # rewriting them from X-Forwarded-* costs every request and serves nobody.
        "proxy_headers": args.proxy_headers,
        # A stop signal cancels what still runs after this; a second one ends at once
        # (snodo.transports.lifespan).
        "timeout_graceful_shutdown": args.graceful_timeout,
    }
    if args.forwarded_allow_ips is not None:
        options["forwarded_allow_ips"] = args.forwarded_allow_ips
    if args.workers == 1:
        hosts, origins = ",".join(args.allow_host), ",".join(args.allow_origin)
        app = _app(args.target, args.path, hosts, origins, _beside(args))
        _announce(args)
        uvicorn.run(app, **options)
        return 0
    os.environ[TARGET_ENV] = args.target
    os.environ[PATH_ENV] = args.path
    os.environ[HOSTS_ENV] = ",".join(args.allow_host)
    os.environ[ORIGINS_ENV] = ",".join(args.allow_origin)
    os.environ[BESIDE_ENV] = _beside(args)
    check_exists(args.target)
    served = _plain_server(args.target)
    if args.token_file:  # said once here, not by every worker
        from snodo.cli.token_file import read_tokens

        try:
            read_tokens(args.token_file)
        except ValueError as exc:
            raise SystemExit(f"snodo: {exc}") from None
    refusal = unshared_sign_ins(served, args.workers)
    if refusal is None and not args.unshared_legacy_sessions:
        refusal = unshared_legacy(served, args.workers)
    if refusal is None and not args.unshared_replay_guard:
        refusal = unshared_guard(served, args.workers)
    if refusal is not None:
        raise SystemExit(f"snodo: {refusal}")
    if environment_secret() is None:
        # Each worker builds its own Server: one without a secret of its own reads this,
        # so the workers open each other's state (a restart or another host would not).
        os.environ[SECRET_ENV] = secrets.token_hex(32)
        print(
            f"snodo: {SECRET_ENV} is not set: a server without a state secret of its own"
            " seals with one made for this run, shared by its workers",
            file=sys.stderr,
        )
    _announce(args)
    uvicorn.run("snodo.cli:http_app", factory=True, workers=args.workers, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
