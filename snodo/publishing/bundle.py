"""A server as an MCP Bundle (``.mcpb``): a zip a host unpacks and runs, whose
``manifest.json`` is made from the server's declarations and checked by the generated
``McpbManifest`` model (manifest_version 0.3).

Inside: ``server/main.py`` (the entry point: it puts ``server/lib`` and ``server/src``
first on ``sys.path`` and runs ``snodo run TARGET --transport stdio``), the server's own
files under ``server/src`` and snodo with what it needs under ``server/lib``
(``snodo.publishing.vendoring``). The manifest's ``mcp_config`` starts it with the
host's ``python3`` (``python`` on Windows) from wherever the host unpacked it
(``${__dirname}``) in isolated mode, without its site packages: no path of the machine
that built it, nothing of the host's but the standard library. Its tools and prompts are the
server's (a prompt's text is the prompt rendered with ``${arguments.NAME}`` for each
argument, or its description when it cannot be rendered without a client); its
``user_config`` is the server's settings (``snodo.server.settings``), passed to it as
environment variables. What is vendored was compiled for this platform and Python, so
the manifest says which.

The zip is deterministic: entries in name order, one fixed time, no owner or mode but
the executable bit.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import platform
import sys
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from snodo.publishing.identity import PublishingError, checked, describe, repository_of
from snodo.publishing.vendoring import vendored
from snodo.revisions.authoring.protocol import (
    LATEST_PROTOCOL_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
)
from snodo.revisions.mcpb import BUNDLE_DIR, MANIFEST_FILE, MANIFEST_VERSION, McpbManifest
from snodo.server import Server
from snodo.server.settings import Setting, declared

__all__ = ["Bundle", "build_bundle", "manifest"]

ENTRY = "server/main.py"
SOURCE = "server/src"
LIBRARY = "server/lib"
PLATFORMS = {"linux": "linux", "darwin": "darwin", "win32": "win32"}
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
LAUNCHER = '''\
"""Start the bundled MCP server over stdio (written by snodo bundle)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE / "lib"), str(HERE / "src")]

from snodo.cli import main  # noqa: E402

TARGET = {target!r}
if TARGET.rpartition(":")[0].endswith(".py") or TARGET.endswith(".py"):
    TARGET = str(HERE / "src" / TARGET)
sys.exit(main(["run", TARGET, "--transport", "stdio"]))
'''


@dataclass(frozen=True, slots=True)
class Bundle:
    """What was written: the file, its manifest, its size and sha256."""

    path: Path
    manifest: dict[str, Any]
    size: int
    sha256: str


def _user_config(settings: tuple[Setting, ...]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for setting in settings:
        option: dict[str, Any] = {
            "type": "file" if setting.kind == "directory" else setting.kind,
            "title": setting.title,
            "description": setting.description or setting.title,
            "required": setting.required,
        }
        if setting.kind == "directory":
            option["type"] = "directory"
        if setting.secret:
            option["sensitive"] = True
        if setting.default is not None:
            option["default"] = setting.default
        options[setting.field] = option
    return options


def _prompt_text(server: Server, name: str, arguments: list[str]) -> str | None:
    """The prompt rendered with a placeholder for each argument, when it renders with
    no client to ask and no lifespan entered; None otherwise."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "prompts/get",
        "params": {
            "name": name,
            "arguments": {argument: f"${{arguments.{argument}}}" for argument in arguments},
            "_meta": {META_PROTOCOL_VERSION: LATEST_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES: {}},
        },
    }
    try:
        reply = asyncio.run(server.handle(json.dumps(message).encode()))
    except Exception:  # a prompt that needs what only a running server has
        return None
    result = (reply.response or {}).get("result") or {}
    texts = [
        str(item["content"]["text"])
        for item in result.get("messages", ())
        if isinstance(item.get("content"), Mapping) and item["content"].get("type") == "text"
    ]
    return (
        "\n\n".join(texts) if texts and result.get("resultType", "complete") == "complete" else None
    )


def _prompts(server: Server) -> list[dict[str, Any]]:
    found = []
    for prompt in server.registry.prompts.values():
        definition = prompt.definition
        arguments = [str(a["name"]) for a in definition.get("arguments", ())]
        description = str(definition.get("description") or "")
        entry: dict[str, Any] = {"name": prompt.name}
        if description:
            entry["description"] = description
        if arguments:
            entry["arguments"] = arguments
        entry["text"] = _prompt_text(server, prompt.name, arguments) or description or prompt.name
        found.append(entry)
    return found


def manifest(server: Server, target: str, author: str | None = None) -> dict[str, Any]:
    """The manifest of the server run as ``target`` (``src``-relative ``FILE.py:NAME`` or
    ``module:NAME``), checked by the generated model."""
    info = server.info
    settings = declared(server.settings) if server.settings is not None else ()
    config: dict[str, Any] = {
        "command": "python3",
        # -I -S: none of the host Python's PYTHON* variables, user or site packages (an
        # older pydantic or orjson there would shadow or break the bundle's own).
        "args": ["-I", "-S", f"{BUNDLE_DIR}/{ENTRY}"],
        "platform_overrides": {"win32": {"command": "python"}},
    }
    if settings:
        config["env"] = {s.variable: f"${{user_config.{s.field}}}" for s in settings}
    version = sys.version_info
    document: dict[str, Any] = {"manifest_version": MANIFEST_VERSION, "name": str(info["name"])}
    if info.get("title"):
        document["display_name"] = str(info["title"])
    document["version"] = str(info["version"])
    document["description"] = describe(server)
    if server.instructions:
        document["long_description"] = server.instructions
    document["author"] = {"name": author or str(info["name"])}
    if info.get("websiteUrl"):
        document["homepage"] = str(info["websiteUrl"])
    if server.repository:
        document["repository"] = {"type": "git", "url": repository_of(server.repository)["url"]}
    document["server"] = {"type": "python", "entry_point": ENTRY, "mcp_config": config}
    tools = [
        {
            "name": tool.name,
            **({"description": str(d)} if (d := tool.definition.get("description")) else {}),
        }
        for tool in server.registry.tools.values()
    ]
    if tools:
        document["tools"] = tools
    prompts = _prompts(server)
    if prompts:
        document["prompts"] = prompts
    if server.offering.backend is not None:  # another server's items come at run time
        document["tools_generated"] = document["prompts_generated"] = True
    if settings:
        document["user_config"] = _user_config(settings)
    minor = f"{version.major}.{version.minor}"
    document["compatibility"] = {
        "platforms": [PLATFORMS.get(sys.platform, sys.platform)],
        "runtimes": {"python": f">={minor} <{version.major}.{version.minor + 1}"},
    }
    document["_meta"] = {"io.snodo/bundle": {"machine": platform.machine(), "python": minor}}
    return checked(McpbManifest, document, "the bundle's manifest")


def _sources(
    location: str, include: Iterable[Path]
) -> tuple[str, list[tuple[Path, PurePosixPath]]]:
    """The target as the bundle runs it, and the server's files under ``src``."""
    module, colon, name = location.rpartition(":")
    if not colon:
        module, name = location, ""
    suffix = f":{name}" if name else ""
    files: list[tuple[Path, PurePosixPath]] = []
    if module.endswith(".py"):
        path = Path(module).resolve()
        if not path.is_file():
            raise PublishingError(f"no such file: {module}")
        base = path.parent
        files.append((path, PurePosixPath(path.name)))
        target = f"{path.name}{suffix}"
    else:
        import importlib.util  # noqa: PLC0415 - a module target only

        top = module.split(".")[0]
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin is None:
            raise PublishingError(f"no module named {top!r} to bundle")
        origin = Path(spec.origin)
        root = origin.parent if spec.submodule_search_locations else origin
        base = root.parent
        for path in sorted(root.rglob("*") if root.is_dir() else [root]):
            if path.is_file() and "__pycache__" not in path.parts:
                files.append((path, PurePosixPath(*path.relative_to(base).parts)))
        target = f"{module}{suffix}"
    for extra in include:
        path = (base / extra).resolve() if not extra.is_absolute() else extra
        if not path.exists() or base not in (path, *path.parents):
            raise PublishingError(f"--include {extra}: not a file or folder beside the server")
        for item in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if item.is_file() and "__pycache__" not in item.parts:
                files.append((item, PurePosixPath(*item.relative_to(base).parts)))
    return target, files


def _write(zipped: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    entry = zipfile.ZipInfo(name, ZIP_TIME)
    entry.compress_type = zipfile.ZIP_DEFLATED
    entry.external_attr = (0o755 if executable else 0o644) << 16
    zipped.writestr(entry, data)


def build_bundle(
    server: Server,
    location: str,
    out: Path,
    *,
    author: str | None = None,
    include: Iterable[Path] = (),
    extra: Iterable[str] = (),
) -> Bundle:
    """Write the bundle of the server loaded from ``location`` (``FILE.py[:NAME]`` or
    ``module[:NAME]``) to ``out``."""
    target, sources = _sources(location, include)
    document = manifest(server, target, author)
    entries: dict[str, tuple[bytes, bool]] = {
        MANIFEST_FILE: ((json.dumps(document, indent=2) + "\n").encode(), False),
        ENTRY: (LAUNCHER.format(target=target).encode(), True),
    }
    for path, relative in sources:
        entries[f"{SOURCE}/{relative}"] = (path.read_bytes(), False)
    for item in vendored(extra):
        entries[f"{LIBRARY}/{item.target}"] = (
            item.source.read_bytes(),
            item.source.suffix == ".so",
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w") as zipped:
        for name in sorted(entries):
            data, executable = entries[name]
            _write(zipped, name, data, executable)
    partial.replace(out)
    data = out.read_bytes()
    return Bundle(out, document, len(data), hashlib.sha256(data).hexdigest())
