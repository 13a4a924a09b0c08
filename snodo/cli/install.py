"""``snodo install HOST TARGET``: add a server to a host's MCP configuration.

Each host keeps its servers in a JSON file of its own, at a path of its own:

===============  =========================================================  ==============
host             file (``--path`` names another)                            key
===============  =========================================================  ==============
claude-desktop   macOS ``~/Library/Application Support/Claude/``,           ``mcpServers``
                 Windows ``%APPDATA%\\Claude\\``, Linux ``~/.config/Claude/``;
                 ``claude_desktop_config.json``
claude-code      ``.mcp.json`` in the project (``--scope user``:            ``mcpServers``
                 ``~/.claude.json``)
cursor           ``.cursor/mcp.json`` in the project (``--scope user``:     ``mcpServers``
                 ``~/.cursor/mcp.json``)
vscode           ``.vscode/mcp.json`` in the project                        ``servers``
mcp-json         ``mcp.json`` in the project                                ``mcpServers``
===============  =========================================================  ==============

The entry starts TARGET with this interpreter (``python -m snodo run TARGET --transport
stdio``), a file target made absolute and the project directory on ``PYTHONPATH``, so it
imports wherever the host starts it; ``--env KEY=VALUE`` and ``--env-file`` add to its
environment. ``--url`` writes an HTTP entry instead (Claude Desktop takes remote servers
in its own settings, not in this file, so it is refused there). Another server's entries
are kept; an entry of the same name is replaced only with ``--force``, and the file as
it was is kept beside it as ``FILE.bak``. ``--print`` writes the JSON to stdout instead.

TARGET may be an MCP Bundle (``FILE.mcpb``, ``snodo bundle`` writes one): it is checked
and unpacked into ``--into`` (default: ``$XDG_DATA_HOME/snodo/bundles/NAME``, else under
``~/.local/share``; an existing folder is replaced only with ``--force``), and the entry
is its manifest's command with the folder put in, and each ``--config KEY=VALUE`` for
the bundle's settings (``snodo.publishing.unpack``).

The file and its backup are never reached through a symbolic link (a cloned project
may carry one pointing at a shell start-up file): a link is refused with one line.
Both are written whole or not at all (a temporary file in the same folder, flushed to
disk, then renamed over the old one), a new file holding ``--env`` values is made 0600,
and an existing file keeps its mode.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["HOSTS", "entry", "main", "register"]

HOSTS = ("claude-desktop", "claude-code", "cursor", "vscode", "mcp-json")

EXAMPLE = """examples:
  snodo install claude-desktop app.py:server
  snodo install claude-code app.py:server --name notes --env API_KEY=...
  snodo install cursor --url https://mcp.example.com/mcp --name notes
  snodo install vscode app.py:server --print
  snodo install cursor weather.mcpb --config api_key=..."""


def register(commands: Any) -> None:
    """Add ``install`` to the ``snodo`` command's sub-commands."""
    install = commands.add_parser(
        "install",
        help="add a server to a host's MCP configuration (Claude, Cursor, VS Code, ...)",
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    install.add_argument("host", choices=HOSTS)
    install.add_argument(
        "target", nargs="?", help="module:name, file.py:name or FILE.mcpb (not with --url)"
    )
    install.add_argument("--url", help="an HTTP server's URL, instead of a TARGET")
    install.add_argument("--name", help="the entry's name (default: from the target)")
    install.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    install.add_argument("--env-file", help="KEY=VALUE lines (# comments) to add")
    install.add_argument("--scope", choices=["project", "user"], default="project")
    install.add_argument("--path", help="the configuration file, instead of the host's own")
    install.add_argument("--force", action="store_true", help="replace an entry of this name")
    install.add_argument("--print", action="store_true", help="print the JSON, write nothing")
    install.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="a bundle's setting"
    )
    install.add_argument("--into", help="the folder a bundle is unpacked into")


def main(args: argparse.Namespace) -> int:
    """Run ``snodo install``; the exit status."""
    try:
        return _install(args)
    except ValueError as exc:
        print(f"snodo: {exc}", file=sys.stderr)
        return 1


def _install(args: argparse.Namespace) -> int:
    if (args.target is None) == (args.url is None):
        raise ValueError("give a TARGET or --url, not both")
    if args.url and args.host == "claude-desktop":
        raise ValueError(
            "Claude Desktop adds remote servers in its own settings (Connectors), not in its file"
        )
    env = _environment(args.env, args.env_file)
    if args.target is not None and args.target.endswith(".mcpb"):
        name, server = _bundled(args, env)
        env = dict(server.get("env", {}))  # the bundle's settings: kept private as --env is
    else:
        name = args.name or _name(args.target or args.url)
        server = entry(args.host, args.target, args.url, env, Path.cwd())
    key = "servers" if args.host == "vscode" else "mcpServers"
    if args.print:
        print(json.dumps({key: {name: server}}, indent=2))
        return 0
    path = Path(args.path) if args.path else config_path(args.host, args.scope)
    backup = path.with_name(path.name + ".bak")
    for file in (path, backup):
        if file.is_symlink():
            raise ValueError(
                f"{file} is a symbolic link; snodo install does not write through links:"
                " nothing was written"
            )
    config: dict[str, Any] = {}
    before = _read(path)
    if before is not None:
        text, mode = before
        try:
            config = json.loads(text.decode("utf-8") or "{}")
        except ValueError as exc:
            raise ValueError(f"{path} is not JSON ({exc}); nothing was written") from None
        if not isinstance(config, dict):
            raise ValueError(f"{path} does not hold a JSON object; nothing was written")
    servers = config.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ValueError(f"{path}: {key!r} is not an object; nothing was written")
    if name in servers and not args.force:
        raise ValueError(f"{path} already has a server {name!r}: --force replaces it")
    if before is not None:
        _write(backup, text, mode)
    else:
        # New: private when it holds secrets, else what the umask gives any new file.
        mode = 0o600 if env else 0o666 & ~_umask()
    servers[name] = server
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, (json.dumps(config, indent=2) + "\n").encode("utf-8"), mode)
    print(f"snodo: {name!r} added to {path}", file=sys.stderr)
    return 0


def entry(
    host: str, target: str | None, url: str | None, env: dict[str, str], project: Path
) -> dict[str, Any]:
    """The host's entry for TARGET over stdio, or for ``url`` over HTTP."""
    if url is not None:
        if host in ("claude-code", "vscode"):
            return {"type": "http", "url": url}
        return {"url": url}
    assert target is not None
    location, _, attribute = target.rpartition(":")
    if not location or not attribute:
        raise ValueError(f"target must look like module:name or file.py:name, got {target!r}")
    if location.endswith(".py"):
        file = (project / location).resolve()
        if not file.is_file():
            raise ValueError(f"{location} does not exist")
        target = f"{file}:{attribute}"
    server: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-P", "-m", "snodo", "run", target, "--transport", "stdio"],
        "env": {"PYTHONPATH": str(project.resolve()), **env},
    }
    if host in ("claude-code", "vscode"):
        server = {"type": "stdio", **server}
    return server


def _bundled(args: argparse.Namespace, env: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """The entry's name and entry for a bundle, unpacked (unless ``--print``)."""
    from snodo.publishing import PublishingError
    from snodo.publishing.unpack import launch, read_manifest, unpack

    bundle = Path(args.target)
    values = _environment(args.config, None)
    try:
        document = read_manifest(bundle)
        name = args.name or str(document["name"])
        data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        folder = Path(args.into) if args.into else data / "snodo" / "bundles" / name
        server = launch(document, folder, values)  # a setting missing: nothing unpacked
        if not args.print:
            unpack(bundle, folder, replace=args.force)
    except PublishingError as exc:
        raise ValueError(str(exc)) from None
    server["env"] = {**server.get("env", {}), **env}
    if not server["env"]:
        del server["env"]
    if args.host in ("claude-code", "vscode"):
        server = {"type": "stdio", **server}
    return name, server


def config_path(host: str, scope: str) -> Path:
    """Where ``host`` reads its servers on this system (``scope``: the project's or the
    user's, for the hosts that have both)."""
    home = Path.home()
    if host == "claude-desktop":
        if sys.platform == "darwin":
            folder = home / "Library" / "Application Support" / "Claude"
        elif sys.platform == "win32":
            folder = Path(os.environ.get("APPDATA", home / "AppData" / "Roaming")) / "Claude"
        else:
            folder = Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "Claude"
        return folder / "claude_desktop_config.json"
    user = scope == "user"
    if host == "claude-code":
        return home / ".claude.json" if user else Path(".mcp.json")
    if host == "cursor":
        return (home if user else Path()) / ".cursor" / "mcp.json"
    if host == "vscode":
        if user:
            raise ValueError("VS Code keeps user servers in its settings: use the project scope")
        return Path(".vscode") / "mcp.json"
    return Path("mcp.json")


def _read(path: Path) -> tuple[bytes, int] | None:
    """The file's bytes and permission bits, None when there is none; never through a
    link (``O_NOFOLLOW``: one put there since the check is refused too)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror}); nothing was written") from None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{path} is not a regular file; nothing was written")
        return file.read(), stat.S_IMODE(status.st_mode)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` whole: a temporary file beside it (made 0600, so
    secrets are never readable by others on the way), flushed, given ``mode``, renamed.
    A rename replaces a link put at ``path`` meanwhile, never what it points at."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
            if hasattr(os, "fchmod"):  # not on Windows before Python 3.13
                os.fchmod(file.fileno(), mode)
            else:
                os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _name(source: str) -> str:
    """A name from a target (its file or module) or a URL (its host)."""
    if "://" in source:
        return source.split("://", 1)[1].split("/", 1)[0].split(":", maxsplit=1)[0]
    location = source.rpartition(":")[0]
    return Path(location).stem if location.endswith(".py") else location.rsplit(".", 1)[-1]


def _environment(pairs: list[str], env_file: str | None) -> dict[str, str]:
    lines = Path(env_file).read_text(encoding="utf-8").splitlines() if env_file else []
    env: dict[str, str] = {}
    for raw in [*lines, *pairs]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, equals, value = line.partition("=")
        if not equals or not key.strip():
            raise ValueError(f"{line!r}: environment entries are KEY=VALUE")
        env[key.strip()] = value.strip().strip("'\"")
    return env
