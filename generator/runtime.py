"""What the runtime (``snodo/``) uses of a revision, read from the runtime itself.

Two readings, both explained in docs/wire.md ("What coverage reads"):

- the source: every ``snodo/**/*.py`` is parsed, and the names it takes from a wire
  package (``from snodo_wire... import X``, ``anything.X`` where ``X`` is a definition),
  the string literals it holds (method names, ``_meta`` keys) and the literal keys of
  the dicts it builds (result fields, capability flags) are collected with the place
  each first appears;
- a live server: a default ``snodo.server.Server`` with a tool, a resource and a prompt
  registered, asked every request method of a revision in process (a legacy revision's
  within a session opened by ``initialize``); -32601 means the runtime has no handler.
  What it advertises and the answers' keys say what it sets.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import json
import sys
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.source import ROOT

METHOD_NOT_FOUND = -32601


@dataclass
class SourceUse:
    """What ``snodo/`` names, each with the first ``path:line`` that names it."""

    names: dict[str, str] = field(default_factory=dict)
    """Identifiers taken from a wire package or read as an attribute."""
    strings: dict[str, str] = field(default_factory=dict)
    """String literals."""
    keys: dict[str, str] = field(default_factory=dict)
    """Literal keys of dicts built or assigned (``{"isError": ...}``, ``d["x"] = ...``)."""


def _walk(tree: ast.AST, where: str, use: SourceUse) -> None:
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("snodo_wire"):
            for alias in node.names:
                use.names.setdefault(alias.name, line)
        elif isinstance(node, ast.Attribute):
            use.names.setdefault(node.attr, line)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            use.strings.setdefault(node.value, line)
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    use.keys.setdefault(key.value, line)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                use.keys.setdefault(node.slice.value, line)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
            for keyword in node.keywords:
                if keyword.arg is not None:
                    use.keys.setdefault(keyword.arg, line)


def read_source(root: Path = ROOT) -> SourceUse:
    """Parse every module of the runtime under ``root / "snodo"``."""
    use = SourceUse()
    for path in sorted((root / "snodo").rglob("*.py")):
        if path.name == "catalog.py" and path.parent.name == "revisions":
            continue  # the generated catalog names every package; it is not a use
        where = path.relative_to(root).as_posix()
        _walk(ast.parse(path.read_text(encoding="utf-8"), where), where, use)
    return use


@dataclass(frozen=True, slots=True)
class Named:
    what: str
    name: str
    where: str


def still_named(
    use: SourceUse, base_defs: dict[str, Any], base_tables: Any, defs: dict[str, Any], tables: Any
) -> list[Named]:
    """What the runtime names that the base revision defines and the new one does not:
    definitions (by identifier) and methods and notifications (by their literal name)."""
    found: list[Named] = []
    for name in sorted(set(base_defs) - set(defs)):
        if name in use.names and not name.startswith("_"):
            what = "protocol constant" if name.isupper() else "definition"
            found.append(Named(what, name, use.names[name]))
    kinds = (
        ("METHODS", "method"),
        ("SERVER_NOTIFICATIONS", "notification"),
        ("CLIENT_NOTIFICATIONS", "notification"),
    )
    for table, what in kinds:
        before = set(getattr(base_tables, table, {}))
        after = set(getattr(tables, table, {}))
        for method in sorted(before - after):
            if method in use.strings:
                found.append(Named(what, method, use.strings[method]))
    return found


def import_package(package: str, root: Path = ROOT) -> Any:
    """Import a generated package, finding new ones under ``root / "generated"``."""
    for entry in (str(root / "generated"), str(root)):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    importlib.invalidate_caches()
    for module in ("models", "tables", "protocol"):
        importlib.import_module(f"{package}.{module}")
    return importlib.import_module(package)


@dataclass(frozen=True, slots=True)
class Probe:
    """What a default server answered and advertised."""

    version: str
    unhandled: tuple[str, ...]
    """Request methods answered with -32601."""
    capabilities: dict[str, Any]
    result_keys: dict[str, frozenset[str]]
    """For each method answered with a result: the keys its result carried."""
    authoring: dict[str, frozenset[str]]
    """The keyword parameters of ``Server.tool``, ``Server.resource``, ``Server.prompt``."""


def _probe_server() -> Any:
    from snodo.server import Server  # noqa: PLC0415 (only coverage reads the runtime)

    server = Server("coverage-probe", "0")

    @server.tool
    def probe_tool(text: str = "") -> str:
        """A tool, so tools/* answer."""
        return text

    @server.resource("probe://resource", name="probe_resource")
    def probe_resource() -> str:
        """A resource, so resources/* answer."""
        return "probe"

    @server.prompt
    def probe_prompt() -> str:
        """A prompt, so prompts/* answer."""
        return "probe"

    return server


def _legacy(server: Any, version: str) -> tuple[Any, Any]:
    from snodo.legacy.methods import LegacyKernel  # noqa: PLC0415 (coverage alone)
    from snodo.legacy.session import LegacySession  # noqa: PLC0415
    from snodo.server.legacy_limits import LegacyLimits  # noqa: PLC0415

    return LegacyKernel(server), LegacySession(LegacyLimits())


def _initialize(version: str) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "coverage-probe", "version": "0"},
    }
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def _ignore(message: Any) -> None:
    """Notifications a probe's requests cause are not what it reads."""


def _keywords(function: Any) -> frozenset[str]:
    """The options a decorator takes: its keywords, and the keys of the options mapping
    its ``**options`` unpacks (``snodo.server.options``)."""
    found: set[str] = set()
    hints = typing.get_type_hints(function)
    for name, parameter in inspect.signature(function).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            unpacked = typing.get_args(hints.get(name))
            for options in unpacked:
                found.update(getattr(options, "__annotations__", {}))
        elif parameter.kind in (
            inspect.Parameter.KEYWORD_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ) and name not in ("self", "function"):
            found.add(name)
    return frozenset(found)


def _params_for(method: str) -> dict[str, Any]:
    """The least a probe request carries so that a handler, if there is one, answers."""
    kind = method.split("/", 1)[0]
    probes: dict[str, dict[str, Any]] = {
        "tools": {"name": "probe_tool", "arguments": {}},
        "prompts": {"name": "probe_prompt"},
        "resources": {"uri": "probe://resource"},
    }
    return probes.get(kind, {})


def probe(version: str, methods: list[str], meta: dict[str, str], era: str = "modern") -> Probe:
    """Ask a default server each method under ``version``: in the modern era with the
    per-request ``_meta`` (``meta`` maps ``protocol_version`` and ``client_capabilities``
    to its keys), in the legacy era within a session opened by ``initialize``."""
    server = _probe_server()
    legacy = _legacy(server, version) if era == "legacy" else None

    async def ask(method: str) -> Any:
        params: dict[str, Any] = _params_for(method)
        if legacy is None:
            params["_meta"] = {meta["protocol_version"]: version, meta["client_capabilities"]: {}}
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        if legacy is not None:
            kernel, session = legacy
            reply = await kernel.handle(session, message, emit=_ignore)
        else:
            reply = await server.handle(json.dumps(message).encode())
        if reply.subscription is not None:  # subscriptions/listen: answered by a stream
            server.close_subscription(reply.subscription)
        return reply.response

    async def run() -> list[tuple[str, Any]]:
        if legacy is not None:
            kernel, session = legacy
            opened = await kernel.handle(session, _initialize(version), emit=_ignore)
            assert opened.response is not None and "result" in opened.response, opened.response
            advertised.update(opened.response["result"].get("capabilities", {}))
        else:
            advertised.update(server.capabilities())
        return [(method, await ask(method)) for method in methods if method != "initialize"]

    advertised: dict[str, Any] = {}
    answers = asyncio.run(run())
    unhandled = []
    result_keys: dict[str, frozenset[str]] = {}
    for method, answer in answers:
        if not isinstance(answer, dict):
            continue
        error = answer.get("error")
        if isinstance(error, dict) and error.get("code") == METHOD_NOT_FOUND:
            unhandled.append(method)
        elif isinstance(answer.get("result"), dict):
            result_keys[method] = frozenset(answer["result"])
    return Probe(
        version=version,
        unhandled=tuple(unhandled),
        capabilities=advertised,
        result_keys=result_keys,
        authoring={
            "Tool": _keywords(server.tool),
            "Resource": _keywords(server.resource),
            "Prompt": _keywords(server.prompt),
        },
    )
