"""``snodo run TARGET`` serves a Server object, like ``uvicorn module:app`` serves an app.

TARGET is ``package.module:name`` or ``path/to/file.py:name``; the name may also be a
function that returns the Server (or an ASGI app, for HTTP).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from typing import Any

from snodo.server import Server

__all__ = ["load", "main"]

TARGET_ENV = "SNODO_TARGET"
PATH_ENV = "SNODO_HTTP_PATH"


def load(target: str) -> Any:
    """Import ``module:name`` or ``file.py:name`` and return the object it names."""
    location, _, name = target.rpartition(":")
    if not location or not name:
        raise SystemExit(
            f"snodo: target must look like module:name or file.py:name, got {target!r}"
        )
    if location.endswith(".py") or os.sep in location:
        path = Path(location).resolve()
        module_name = f"snodo_target_{path.stem}"  # never shadows a real module
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"snodo: cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    try:
        found = getattr(module, name)
    except AttributeError:
        raise SystemExit(f"snodo: {location} has no attribute {name!r}") from None
    return found


def _server(target: str) -> Server:
    found = load(target)
    if not isinstance(found, Server) and callable(found):
        found = found()
    if not isinstance(found, Server):
        raise SystemExit(f"snodo: {target} is not a snodo Server")
    return found


def http_app() -> Any:
    """uvicorn factory for ``--workers``: each worker process loads the target anew."""
    from snodo.transports.http import HttpApp

    return HttpApp(_server(os.environ[TARGET_ENV]), path=os.environ.get(PATH_ENV) or None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="snodo", description="Serve a snodo MCP server.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve a Server object")
    run.add_argument("target", help="module:name or path/to/file.py:name")
    run.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8000)
    run.add_argument("--path", default="/mcp", help="HTTP endpoint path ('' for any path)")
    run.add_argument("--workers", type=int, default=1, help="HTTP worker processes")
    run.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr)
    if args.transport == "stdio":
        from snodo.transports.stdio import serve_stdio

        asyncio.run(serve_stdio(_server(args.target)))
        return 0
    import uvicorn

    from snodo.transports.http import HttpApp

    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": args.log_level,
        "access_log": False,
    }
    if args.workers == 1:
        uvicorn.run(HttpApp(_server(args.target), path=args.path or None), **options)
        return 0
    os.environ[TARGET_ENV] = args.target
    os.environ[PATH_ENV] = args.path
    uvicorn.run("snodo.cli:http_app", factory=True, workers=args.workers, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
