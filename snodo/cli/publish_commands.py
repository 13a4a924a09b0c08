"""``snodo card``, ``snodo server-json`` and ``snodo bundle``: a server published three
ways, each document made from the server's own declarations (``snodo.publishing``).

    snodo card app.py:server --name io.github.me/weather --url https://mcp.example.com/mcp
    snodo server-json app.py:server --name io.github.me/weather --package pypi:weather-mcp
    snodo bundle app.py:server -o weather.mcpb

The card and the registry entry print as JSON on stdout; the bundle is written to
``-o`` and one line on stderr says where, its size and sha256 (what a registry entry's
``mcpb:URL#SHA256`` package names). A server that lacks what a document needs (a
description, a valid name) ends the command with one ``snodo:`` line saying what to
declare.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from snodo.server import Server

__all__ = ["main", "register"]

COMMANDS = ("card", "server-json", "bundle")


def register(commands: Any) -> None:
    """Add the three commands to ``snodo``'s sub-commands."""
    card = commands.add_parser("card", help="print the server's Server Card (JSON)")
    json_entry = commands.add_parser(
        "server-json", help="print the server's MCP Registry entry (server.json)"
    )
    for parser in (card, json_entry):
        parser.add_argument("target", help="file.py[:name] or module[:name]")
        parser.add_argument("--name", help="NAMESPACE/NAME (default: the server's card_name)")
        parser.add_argument("--url", help="where the server is served (its streamable-http URL)")
    json_entry.add_argument(
        "--package",
        action="append",
        default=[],
        metavar="KIND:NAME",
        help="pypi:NAME[==VERSION], npm:NAME[@VERSION], oci:IMAGE:TAG or mcpb:URL#SHA256",
    )
    bundle = commands.add_parser("bundle", help="write the server as an MCP Bundle (.mcpb)")
    bundle.add_argument("target", help="file.py[:name] or module[:name]")
    bundle.add_argument("-o", "--output", required=True, help="the .mcpb file to write")
    bundle.add_argument("--author", help="the manifest's author (default: the server's name)")
    bundle.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="PATH",
        help="a file or folder beside the server that it reads (repeat)",
    )
    bundle.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="DISTRIBUTION",
        help="an installed distribution the server imports beyond snodo's (repeat)",
    )


def main(args: argparse.Namespace, load: Callable[[str], Server]) -> int:
    """Run one of the commands on the server ``load`` finds; the exit status."""
    # Imported here: the documents' models load only for the commands that make them.
    from snodo.publishing import PublishingError, card_bytes, server_card, server_json
    from snodo.publishing.bundle import build_bundle

    server = load(args.target)
    try:
        if args.command == "card":
            sys.stdout.buffer.write(card_bytes(server_card(server, args.name, args.url)))
            return 0
        if args.command == "server-json":
            entry = server_json(server, args.name, args.url, tuple(args.package))
            print(json.dumps(entry, indent=2, ensure_ascii=False))
            return 0
        written = build_bundle(
            server,
            args.target,
            Path(args.output),
            author=args.author,
            include=[Path(p) for p in args.include],
            extra=args.require,
        )
    except PublishingError as exc:
        print(f"snodo: {exc}", file=sys.stderr)
        return 1
    print(
        f"snodo: wrote {written.path} ({written.size} bytes, sha256 {written.sha256})",
        file=sys.stderr,
    )
    return 0
