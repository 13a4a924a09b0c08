"""A server's MCP Registry entry (``server.json``, of the schema release pinned in
``schema/server-json``), made from its declarations and checked by the generated
``ServerDetail`` model.

It says who the server is exactly as its Server Card does (``snodo.publishing.identity``),
where it runs remotely (``url``: a streamable-http remote, with the ``Authorization``
header a protected server requires), and the packages it is installed from: each given
as ``pypi:NAME[==VERSION]``, ``npm:NAME[@VERSION]``, ``oci:IMAGE:TAG`` or
``mcpb:URL#SHA256`` (a bundle's download and its digest), a package's version the
server's unless given. A package runs over stdio with the server's settings
(``snodo.server.settings``) as its environment variables.
"""

from __future__ import annotations

import re
from typing import Any

from snodo.publishing.card import BEARER
from snodo.publishing.identity import PublishingError, checked, identity
from snodo.revisions.server_json import SCHEMA_URI, ServerDetail
from snodo.server import Server
from snodo.server.settings import Setting, declared

__all__ = ["environment", "package", "server_json"]

FORMATS = {"string": "string", "number": "number", "boolean": "boolean"}
"""A setting's kind as the registry's input ``format`` (a file or folder: ``filepath``)."""
RUNTIMES = {"pypi": "uvx", "npm": "npx", "oci": "docker"}
"""How a client runs each kind of package (the schema's ``runtimeHint`` examples)."""
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def environment(settings: tuple[Setting, ...]) -> list[dict[str, Any]]:
    """The settings as the registry's environment variables."""
    found = []
    for setting in settings:
        entry: dict[str, Any] = {
            "name": setting.variable,
            "description": setting.description or setting.title,
            "format": FORMATS.get(setting.kind, "filepath"),
            "isRequired": setting.required,
            "isSecret": setting.secret,
        }
        if setting.default is not None:
            entry["default"] = _text(setting.default)
        found.append(entry)
    return found


def _text(value: str | int | float | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def package(spec: str, version: str, settings: tuple[Setting, ...]) -> dict[str, Any]:
    """One ``packages`` entry from ``KIND:WHAT``."""
    kind, colon, what = spec.partition(":")
    if not colon or not what:
        raise PublishingError(f"a package is KIND:NAME (pypi, npm, oci or mcpb), not {spec!r}")
    entry: dict[str, Any] = {"registryType": kind}
    if kind == "pypi":
        name, _, pinned = what.partition("==")
        entry.update(identifier=name, version=pinned or version)
    elif kind == "npm":
        at = what.rfind("@")
        name, pinned = (what[:at], what[at + 1 :]) if at > 0 else (what, "")
        entry.update(identifier=name, version=pinned or version)
    elif kind == "oci":
        entry["identifier"] = what
    elif kind == "mcpb":
        url, _, digest = what.rpartition("#")
        if not url or not SHA256.fullmatch(digest):
            raise PublishingError("a bundle is mcpb:URL#SHA256 (its download and its digest)")
        entry.update(identifier=url, version=version, fileSha256=digest)
    else:
        raise PublishingError(f"no package kind {kind!r}: pypi, npm, oci or mcpb")
    if kind in RUNTIMES:
        entry["runtimeHint"] = RUNTIMES[kind]
    entry["transport"] = {"type": "stdio"}
    if settings:
        entry["environmentVariables"] = environment(settings)
    return entry


def server_json(
    server: Server,
    name: str | None = None,
    url: str | None = None,
    packages: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The registry entry as JSON data (``PublishingError`` says what is missing)."""
    who = identity(server, name)
    document: dict[str, Any] = {"$schema": SCHEMA_URI, **who.members()}
    settings = declared(server.settings) if server.settings is not None else ()
    if packages:
        document["packages"] = [package(spec, who.version, settings) for spec in packages]
    if url is not None:
        remote: dict[str, Any] = {"type": "streamable-http", "url": url}
        if server.authorization is not None:
            remote["headers"] = [BEARER]
        document["remotes"] = [remote]
    return checked(ServerDetail, document, "the registry entry")
