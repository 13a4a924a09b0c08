"""What the runtime (``snodo/``) does with a revision, read from the runtime itself.

Three readings, explained in docs/wire.md ("What coverage reads"): the runtime's own
declarations of what it fills (``snodo.server.filled``, read by ``generator.coverage``);
the registry, which must be able to read the revision's package (``registry_problems``);
and a live server: a default ``snodo.server.Server`` with a tool, a resource, a template
and a prompt registered, asked every request method of a revision in process (a legacy
revision's within a session opened by ``initialize``); -32601 means the runtime has no
handler. What it advertises and the answers' keys say what it sets.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.source import ROOT

METHOD_NOT_FOUND = -32601


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
    """The keyword parameters of ``Server.tool``, ``Server.resource``,
    ``Server.resource_template`` and ``Server.prompt``."""


def _probe_server() -> Any:
    from snodo.server import Server, Spec  # noqa: PLC0415 (only coverage reads the runtime)

    server = Server("coverage-probe", "0", spec=Spec(check_answers=False))  # it reports, not serves

    @server.tool
    def probe_tool(text: str = "") -> str:
        """A tool, so tools/* answer."""
        return text

    @server.resource("probe://resource", name="probe_resource")
    def probe_resource() -> str:
        """A resource, so resources/* answer."""
        return "probe"

    @server.resource_template("probe://items/{item}", name="probe_template")
    def probe_template(item: str) -> str:
        """A template, so resources/templates/list answers with one."""
        return item

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
            "ResourceTemplate": _keywords(server.resource_template),
            "Prompt": _keywords(server.prompt),
        },
    )


def registry_problems(version: str, package: str, era: str) -> list[str]:
    """What the runtime's registry cannot read of ``package`` (the revision ``version``
    of ``era``): what it reads of every revision, whichever others stay served. Empty
    when the runtime can serve it."""
    from snodo.revisions import AUTHORING, REVISIONS  # noqa: PLC0415 (coverage alone)
    from snodo.revisions import Revision as Read  # noqa: PLC0415

    import_package(package)
    try:
        revision = Read(version, package, era, False, (version,))
    except (AttributeError, ImportError, ValueError) as exc:
        return [f"{package}: {exc}"]
    problems = []
    if era == "modern":
        # Every modern request names its version and declares its client under these
        # keys, read before the revision is known: the authoring revision's keys.
        read_with = REVISIONS.of(AUTHORING).meta_keys
        for name in ("protocol_version", "client_capabilities"):
            key = revision.meta_keys.get(name)
            if key != read_with[name]:
                problems.append(
                    f"{package}: the _meta key {name} is {key!r}; modern requests are read "
                    f"with {read_with[name]!r}"
                )
    if revision.input_required_methods and revision.input_required_result is None:
        problems.append(f"{package}: its methods ask for input and it names no result for it")
    return problems
