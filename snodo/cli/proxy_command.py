"""``snodo proxy``: serve another MCP server through snodo (``snodo.gateway.proxy``).

    snodo proxy [OPTIONS] https://backend.example/mcp
    snodo proxy [OPTIONS] -- COMMAND ARG...
    snodo proxy [OPTIONS] --config mcp.json

The backend is an HTTP endpoint, or a stdio server the proxy starts (once per worker),
of either era; or every server of an ``mcpServers`` configuration file, each under its
name as a prefix (``snodo.gateway.serve_group``). ``--include``, ``--exclude``,
``--rename`` and ``--shape FILE`` say what is taken of the backend and how it is offered
(``snodo.gateway.Shape``); with ``--tool-search`` its tools are
searched rather than listed (``snodo.search``). An HTTP backend is called with a
bearer token (``--auth-file``), or with the sign-in ``snodo auth login`` kept for it
(``--oauth``, refreshed as it expires); front clients are checked as a server's are,
with ``--token-file`` (fixed tokens) or ``--authorization`` (a ``ProtectedResource``,
OAuth). The proxy serves it like
``snodo run`` serves a target, with the same options (``--transport``, ``--host``,
``--port``, ``--workers``, ...): the command describes the backend in
``SNODO_PROXY_BACKEND`` and runs ``snodo run`` on ``from_environment``, which each
worker calls to build its proxy.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path
from typing import Any

from snodo.cli.client_commands import add_auth_options, auth_token, bearer
from snodo.cli.serve_options import SERVE_OPTIONS, add_serve_options
from snodo.cli.sign_in import is_kept, kept_auth
from snodo.cli.targets import load
from snodo.client import Client
from snodo.extensions import gateway_halves
from snodo.gateway import Shape, proxy, serve_group
from snodo.server import Server
from snodo.server.notify_bus import notification_bus

__all__ = ["BACKEND_ENV", "from_environment", "main", "register", "shown"]

BACKEND_ENV = "SNODO_PROXY_BACKEND"
TARGET = "snodo.cli.proxy_command:from_environment"


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "proxy",
        help="serve another MCP server (a URL, or a stdio command after --) through snodo",
        epilog="examples:\n"
        "  snodo proxy --transport http --port 8000 https://mcp.example.com/mcp\n"
        "  snodo proxy --transport http --port 8000 -- python legacy_server.py\n"
        "  snodo proxy --transport http --port 8000 --config mcp.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_serve_options(parser)
    add_auth_options(parser, "a bearer token for an HTTP backend")
    parser.add_argument(
        "--oauth",
        action="store_true",
        help="call an HTTP backend with the sign-in snodo auth login kept for it (refreshed)",
    )
    parser.add_argument(
        "--authorization",
        metavar="TARGET",
        help="module:name of the ProtectedResource (snodo.auth) front clients' tokens are"
        " checked with, as a server's authorization=; --token-file for fixed tokens",
    )
    parser.add_argument(
        "--era",
        choices=["auto", "modern", "legacy"],
        default="auto",
        help="the backend's era (default: found out)",
    )
    parser.add_argument(
        "--answer-timeout",
        metavar="SECONDS",
        type=float,
        default=300.0,
        help="how long a legacy backend's question waits for the front client's answer",
    )
    parser.add_argument(
        "--backend-sessions",
        metavar="N",
        type=int,
        default=32,
        help="a legacy backend's sessions (stdio: processes), one per front client, at once",
    )
    parser.add_argument(
        "--backend-idle",
        metavar="SECONDS",
        type=float,
        default=300.0,
        help="how long a front client's legacy backend session stays open unused",
    )
    parser.add_argument("--name", default="snodo-proxy", help="the proxy's server name")
    parser.add_argument(
        "--notify",
        metavar="REDIS_URL",
        help="workers share list changes, and a legacy backend's rounds, over Redis",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="serve every server of an mcpServers configuration (JSON) as one",
    )
    parser.add_argument(
        "--tool-search",
        action="store_true",
        help="list a tool that searches the backend's tools (and one that calls them)"
        " instead of them all (snodo.search)",
    )
    parser.add_argument(
        "--tool-search-results",
        metavar="N",
        type=int,
        default=5,
        help="the most tools one search answers (default 5)",
    )
    parser.add_argument(
        "--always-visible",
        metavar="TOOL",
        action="append",
        default=[],
        help="a tool listed beside the search (repeat for more); implies --tool-search",
    )
    parser.add_argument(
        "--include",
        metavar="PATTERN",
        action="append",
        help="serve only the backend's tools, prompts and resources whose name or URI"
        " fits (a shell pattern; repeat for more)",
    )
    parser.add_argument(
        "--exclude",
        metavar="PATTERN",
        action="append",
        default=[],
        help="do not serve the backend's tools, prompts and resources whose name or URI"
        " fits (repeat for more)",
    )
    parser.add_argument(
        "--rename",
        metavar="OLD=NEW",
        action="append",
        default=[],
        help="serve the backend's tool or prompt OLD as NEW (repeat for more)",
    )
    parser.add_argument(
        "--shape",
        metavar="FILE",
        help="a JSON file of what to take of the backend and how to offer it: include,"
        " exclude, rename, and tools reshaped (snodo.gateway.Shape)",
    )
    parser.add_argument(
        "backend", nargs=argparse.REMAINDER, help="URL, or -- COMMAND ARG... (stdio)"
    )
    parser.set_defaults(options_after_url=parser.parse_args)


def _options_after_url(args: argparse.Namespace) -> None:
    """``snodo proxy URL --port N``: the words after a URL are options, parsed into
    ``args`` (a command after ``--`` keeps its own, which are its arguments)."""
    words = list(args.backend)
    if len(words) > 1 and words[0].startswith(("http://", "https://")):
        parse = args.options_after_url
        del args.backend
        parse(words[1:], args)
        if args.backend:
            raise SystemExit(f"snodo proxy: after the URL only options, not {args.backend[0]!r}")
        args.backend = [words[0]]


def backend_of(args: argparse.Namespace) -> dict[str, Any]:
    """The backend as ``SNODO_PROXY_BACKEND`` describes it."""
    if getattr(args, "options_after_url", None) is not None:
        _options_after_url(args)
    words = list(args.backend)
    if words[:1] == ["--"]:
        words = words[1:]
    if args.backend_sessions < 1 or args.backend_idle <= 0:
        raise SystemExit("snodo proxy: --backend-sessions and --backend-idle must be positive")
    described: dict[str, Any] = {
        "era": args.era,
        "answer_timeout": args.answer_timeout,
        "backend_sessions": args.backend_sessions,
        "backend_idle": args.backend_idle,
        "name": args.name,
        "notify": args.notify,
    }
    if args.tool_search or args.always_visible:
        if args.tool_search_results < 1:
            raise SystemExit("snodo proxy: --tool-search-results is at least 1")
        described["tool_search"] = {
            "max_results": args.tool_search_results,
            "always_visible": list(args.always_visible),
        }
    shape = _shape_of(args)
    if args.config is not None:
        if words:
            raise SystemExit("snodo proxy: give --config or a backend, not both")
        if shape is not None:
            raise SystemExit('snodo proxy: with --config, give each server its "shape" in the file')
        described["config"] = str(Path(args.config).resolve())
        return described
    if not words:
        raise SystemExit("snodo proxy: give the backend: a URL, -- COMMAND ARG..., or --config")
    if shape is not None:
        described["shape"] = shape
    if args.authorization is not None:
        if args.token_file:
            raise SystemExit("snodo proxy: give --authorization or --token-file, not both")
        described["authorization"] = args.authorization
    if len(words) == 1 and words[0].startswith(("http://", "https://")):
        described["url"] = words[0]
        try:
            token = auth_token(args)
        except ValueError as exc:
            raise SystemExit(f"snodo proxy: {exc}") from None
        if token and args.oauth:
            raise SystemExit("snodo proxy: give --oauth or a bearer token, not both")
        if token:
            described["auth"] = token
        if args.oauth:
            if not is_kept(words[0]):
                raise SystemExit(
                    f"snodo proxy: not signed in to {words[0]}: snodo auth login {words[0]}"
                )
            described["oauth"] = True
    elif args.oauth:
        raise SystemExit("snodo proxy: --oauth is for an HTTP backend (a URL)")
    else:
        described["command"] = words
    return described


def _shape_of(args: argparse.Namespace) -> dict[str, Any] | None:
    """The shape ``--shape`` and the filter and rename options describe, checked."""
    shape: dict[str, Any] = {}
    if args.shape is not None:
        try:
            shape = json.loads(Path(args.shape).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"snodo proxy: --shape {args.shape}: {exc}") from None
        if not isinstance(shape, dict):
            raise SystemExit(f"snodo proxy: --shape {args.shape}: not a JSON object")
    if args.include:
        shape["include"] = [*(shape.get("include") or []), *args.include]
    if args.exclude:
        shape["exclude"] = [*(shape.get("exclude") or []), *args.exclude]
    for pair in args.rename:
        old, equals, new = pair.partition("=")
        if not equals or not old or not new:
            raise SystemExit(f"snodo proxy: --rename takes OLD=NEW, not {pair!r}")
        shape["rename"] = {**(shape.get("rename") or {}), old: new}
    if not shape:
        return None
    try:
        Shape.from_json(shape)
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"snodo proxy: the shape: {exc}") from None
    return shape


def main(args: argparse.Namespace, run: Any) -> int:
    """Describe the backend for the workers, then serve as ``snodo run`` does."""
    os.environ[BACKEND_ENV] = json.dumps(backend_of(args))
    argv = ["run", TARGET]
    for option in SERVE_OPTIONS:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            argv += [option, str(value)]
    if args.unshared_legacy_sessions:
        argv.append("--unshared-legacy-sessions")
    if args.unshared_replay_guard:
        argv.append("--unshared-replay-guard")
    code: int = run(argv)
    return code


def shown(target: str) -> str:
    """What ``snodo run`` says it serves: a target by name, the proxy by its backend."""
    if target != TARGET or BACKEND_ENV not in os.environ:
        return f"serving {target}"
    described = json.loads(os.environ[BACKEND_ENV])
    if "config" in described:
        return f"proxying the servers of {described['config']}"
    if "url" in described:
        return f"proxying {described['url']}"
    return f"proxying {shlex.join(described.get('command') or [])}"


def from_environment() -> Server:
    """The proxy ``SNODO_PROXY_BACKEND`` describes (each worker builds its own)."""
    described = json.loads(os.environ[BACKEND_ENV])
    notify = described.get("notify")
    # The extensions snodo ships pass through as the servers behind declare them.
    shared: dict[str, Any] = {"passing": gateway_halves()}
    if notify:
        shared |= {"relay": notify, "notifications": notification_bus(notify)}
    searched = described.get("tool_search")
    if isinstance(searched, dict):
        from snodo.search import ToolSearch  # the search extra, when asked

        shared["tool_search"] = ToolSearch(
            max_results=int(searched.get("max_results", 5)),
            always_visible=searched.get("always_visible") or (),
        )
    name = described.get("name", "snodo-proxy")
    shared["answer_timeout"] = float(described.get("answer_timeout", 300.0))
    shared["backend_sessions"] = int(described.get("backend_sessions", 32))
    shared["backend_idle"] = float(described.get("backend_idle", 300.0))
    if "config" in described:
        return serve_group(described["config"], name=name, **shared)
    if "authorization" in described:
        shared["authorization"] = _front_authorization(described["authorization"])
    options: dict[str, Any] = {"era": described.get("era", "auto")}
    url, command, token = described.get("url"), described.get("command"), described.get("auth")
    signed_in = bool(described.get("oauth"))

    def connect(**handlers: Any) -> Client:
        if url is not None:
            # The kept sign-in: each worker refreshes it in turn (snodo.oauth.kept).
            auth = kept_auth(url, browser=False) if signed_in else None
            auth = bearer(token) if token is not None else auth
            return Client.http(url, auth=auth, **options, **handlers)
        return Client.stdio(command, **options, **handlers)

    shape = described.get("shape")
    if shape is not None:
        shared["shape"] = Shape.from_json(shape)
    return proxy(connect, name=name, **shared)


def _front_authorization(target: str) -> Any:
    """The ``ProtectedResource`` ``--authorization`` names (or a function making it):
    what ``Server(authorization=...)`` takes, told by what the HTTP app asks of it."""
    found = load(target)
    if not _protects(found) and callable(found):
        found = found()
    if not _protects(found):
        raise SystemExit(f"snodo proxy: {target} is not a ProtectedResource (snodo.auth)")
    return found


def _protects(found: Any) -> bool:
    return callable(getattr(found, "authorize", None)) and hasattr(found, "metadata_paths")
