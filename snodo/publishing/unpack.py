"""An MCP Bundle read back: its manifest checked, its files unpacked, the command that
starts it resolved, as a host does (``snodo install HOST FILE.mcpb``).

A bundle is a stranger's zip: every entry must be a plain file under the folder it is
unpacked into (no absolute path, no ``..``, no link), the whole at most ``MAX_BYTES``
unpacked, and its ``manifest.json`` valid for the generated ``McpbManifest`` model. The
command is the manifest's ``mcp_config`` with this platform's override, each
``${__dirname}`` the folder, ``${HOME}`` the home folder, ``${/}`` and
``${pathSeparator}`` the path separator, and ``${user_config.KEY}`` the value given for
``KEY`` (else its default; a required one missing is an error naming it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from snodo.publishing.identity import PublishingError, checked
from snodo.revisions.mcpb import MANIFEST_FILE, McpbManifest

__all__ = ["MAX_BYTES", "launch", "read_manifest", "unpack"]

MAX_BYTES = 512 * 1024 * 1024
"""The most a bundle may unpack to."""
_VARIABLE = re.compile(r"\$\{([^}]*)\}")


def _entries(zipped: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The bundle's files, each checked to stay inside the folder."""
    total = 0
    found = []
    for info in zipped.infolist():
        name = PurePosixPath(info.filename)
        mode = info.external_attr >> 16
        if (
            name.is_absolute()
            or ".." in name.parts
            or "\\" in info.filename
            or ":" in name.parts[0]
        ):
            raise PublishingError(f"the bundle holds {info.filename!r}, outside its folder")
        if stat.S_ISLNK(mode):
            raise PublishingError(f"the bundle holds a link, {info.filename!r}")
        total += info.file_size
        if total > MAX_BYTES:
            raise PublishingError(f"the bundle unpacks to more than {MAX_BYTES} bytes")
        if not info.is_dir():
            found.append(info)
    return found


def read_manifest(bundle: Path) -> dict[str, Any]:
    """The bundle's manifest, checked."""
    try:
        with zipfile.ZipFile(bundle) as zipped:
            _entries(zipped)
            raw = zipped.read(MANIFEST_FILE)
    except (OSError, zipfile.BadZipFile, KeyError) as exc:
        raise PublishingError(f"{bundle} is not an MCP Bundle ({exc})") from None
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise PublishingError(f"{bundle}: its {MANIFEST_FILE} is not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise PublishingError(f"{bundle}: its {MANIFEST_FILE} is not an object")
    return checked(McpbManifest, document, f"{bundle}'s manifest")


def unpack(bundle: Path, into: Path, replace: bool = False) -> dict[str, Any]:
    """Unpack ``bundle`` into the folder ``into`` (made; an existing one is replaced only
    with ``replace``); its manifest."""
    document = read_manifest(bundle)
    if into.exists() and not replace:
        raise PublishingError(f"{into} already exists: --force replaces it")
    into.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=into.parent, prefix=f".{into.name}."))
    try:
        with zipfile.ZipFile(bundle) as zipped:
            for info in _entries(zipped):
                target = staging.joinpath(*PurePosixPath(info.filename).parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(info) as source, target.open("wb") as sink:
                    shutil.copyfileobj(source, sink)
                if (info.external_attr >> 16) & 0o111:
                    target.chmod(0o755)
        if into.exists():
            shutil.rmtree(into)
        staging.replace(into)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return document


def _platform() -> str:
    return {"darwin": "darwin", "win32": "win32"}.get(sys.platform, "linux")


def _options(document: Mapping[str, Any], values: Mapping[str, str]) -> dict[str, str]:
    options: dict[str, Any] = document.get("user_config") or {}
    unknown = sorted(set(values) - set(options))
    if unknown:
        raise PublishingError(f"the bundle has no setting {unknown[0]!r}: it has {sorted(options)}")
    resolved = {}
    missing = []
    for key, option in options.items():
        if key in values:
            resolved[key] = values[key]
        elif "default" in option:
            default = option["default"]
            resolved[key] = json.dumps(default) if isinstance(default, bool) else str(default)
        elif option.get("required"):
            missing.append(key)
        else:
            resolved[key] = ""
    if missing:
        raise PublishingError(
            "the bundle needs " + ", ".join(f"--config {key}=..." for key in missing)
        )
    return resolved


def launch(
    document: Mapping[str, Any], folder: Path, values: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``{"command", "args", "env"}`` that start the unpacked bundle in ``folder``."""
    config: dict[str, Any] = dict(document["server"]["mcp_config"])
    override = (config.pop("platform_overrides", None) or {}).get(_platform(), {})
    config.update(override)
    known = {
        "__dirname": str(folder.resolve()),
        "HOME": str(Path.home()),
        "/": os.sep,
        "pathSeparator": os.sep,
    }
    known.update({f"user_config.{k}": v for k, v in _options(document, values or {}).items()})

    def resolve(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            if match.group(1) not in known:
                raise PublishingError(f"the bundle's command names ${{{match.group(1)}}}")
            return known[match.group(1)]

        return _VARIABLE.sub(one, text)

    found: dict[str, Any] = {
        "command": resolve(str(config["command"])),
        "args": [resolve(str(a)) for a in config.get("args", ())],
    }
    env = {str(k): resolve(str(v)) for k, v in (config.get("env") or {}).items()}
    if env:
        found["env"] = env
    return found
