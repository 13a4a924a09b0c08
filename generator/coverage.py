"""``python -m generator coverage REV``: what a revision defines that the runtime does
not serve, one line each, read from the runtime (``generator.runtime``) rather than
from a list kept by hand.

Lines start with what they report: ``not served:`` (a request method the default server
answers -32601), ``never sent:`` / ``never handled:`` (notifications the runtime's
source never names), ``flag never set:`` (a ``ServerCapabilities`` path neither
advertised nor built), ``never filled:`` (a result field neither answered nor built;
``error:`` when the schema requires it), ``no authoring keyword:`` (a ``Tool``,
``Resource`` or ``Prompt`` field no decorator keyword sets) and ``error: the runtime
still names`` (a definition or method the revision removed).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from generator.revisions import Revision, revisions
from generator.runtime import Probe, SourceUse, import_package, probe, read_source, still_named
from generator.source import ROOT

AUTHORED = ("Tool", "Resource", "Prompt")


@dataclass(frozen=True, slots=True)
class Coverage:
    lines: tuple[str, ...]
    errors: int
    """Lines that make the command fail: required fields never filled, removed names
    the runtime still uses."""


def _wire(field_name: str, info: Any) -> str:
    return str(info.alias or field_name)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class a field holds (through ``X | MISSING`` and ``Annotated``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _flags(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every capability path of ``ServerCapabilities``: its members and theirs."""
    paths = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{_wire(name, info)}"
        paths.append(path)
        inner = _model_of(info.annotation)
        if inner is not None and inner.model_fields:
            paths.extend(_flags(inner, f"{path}."))
    return paths


def _advertised(capabilities: Any, path: str) -> bool:
    node = capabilities
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _served_base(revision: Revision) -> Revision | None:
    """The newest other served revision of the same era: what the runtime serves today
    that this revision would sit beside or replace."""
    for other in revisions():
        if (
            other.pin.revision != revision.pin.revision
            and other.overlay.era == revision.overlay.era
            and other.overlay.served
        ):
            return other
    return None


def _probe_version(revision: Revision, base: Revision | None) -> str:
    """Ask in the revision's own version when the runtime speaks it, else in the
    base's (the handlers a method has do not depend on which of the two it is)."""
    from snodo.server import Server  # noqa: PLC0415 (only coverage reads the runtime)

    server = Server("coverage-probe", "0")
    spoken = (*server.supported_versions, *getattr(server, "legacy_versions", ()))
    if revision.overlay.latest_version in spoken or base is None:
        return revision.overlay.latest_version
    return base.overlay.latest_version


def coverage(revision: Revision) -> Coverage:
    if revision.overlay.era is None:
        raise ValueError(f"coverage reads core revisions; {revision.pin.revision} is an extension")
    package = import_package(revision.package, ROOT)
    tables, models, protocol = package.tables, package.models, package.protocol
    base = _served_base(revision)
    use = read_source(ROOT)
    found = probe(
        _probe_version(revision, base),
        list(tables.METHODS),
        {
            "protocol_version": getattr(protocol, "META_PROTOCOL_VERSION", ""),
            "client_capabilities": getattr(protocol, "META_CLIENT_CAPABILITIES", ""),
        },
        revision.overlay.era,
    )
    lines: list[str] = []
    errors = 0
    lines += [f"not served: {method}" for method in found.unhandled]
    lines += _notifications(tables, use)
    lines += [
        f"flag never set: {path}"
        for path in _flags(models.ServerCapabilities)
        if not _advertised(found.capabilities, path) and path.rsplit(".", 1)[-1] not in use.keys
    ]
    for line, required in _results(tables, found, use):
        errors += required
        lines.append(
            f"error: required field never filled: {line}" if required else f"never filled: {line}"
        )
    lines += _authoring(models, found)
    if base is not None:
        base_package = import_package(base.package, ROOT)
        for named in still_named(
            use,
            {**_definitions(base_package.models), **vars(base_package.protocol)},
            base_package.tables,
            {**_definitions(models), **vars(protocol)},
            tables,
        ):
            errors += 1
            lines.append(
                f"error: the runtime still names {named.what} {named.name} ({named.where}), "
                f"which {revision.pin.revision} does not define"
            )
    return Coverage(lines=tuple(lines), errors=errors)


def _definitions(models: Any) -> dict[str, Any]:
    return {
        name: value
        for name, value in vars(models).items()
        if not name.startswith("_")
        and (
            getattr(value, "__module__", None) == models.__name__
            or type(value).__name__ == "TypeAliasType"
        )
    }


def _notifications(tables: Any, use: SourceUse) -> list[str]:
    lines = []
    kinds = (("never sent", "SERVER_NOTIFICATIONS"), ("never handled", "CLIENT_NOTIFICATIONS"))
    for kind, table in kinds:
        for method, spec in getattr(tables, table, {}).items():
            named = method in use.strings or spec.notification.__name__ in use.names
            if not named:
                lines.append(f"{kind}: {method}")
    return lines


def _results(tables: Any, found: Probe, use: SourceUse) -> list[tuple[str, bool]]:
    out = []
    seen: set[tuple[str, str]] = set()
    for method, spec in tables.METHODS.items():
        answered = found.result_keys.get(method, frozenset())
        for name, info in spec.result.model_fields.items():
            wire = _wire(name, info)
            key = (spec.result.__name__, wire)
            if key in seen or wire in answered or wire in use.keys:
                continue
            seen.add(key)
            out.append((f"{spec.result.__name__}.{wire}", info.is_required()))
    return out


def _authoring(models: Any, found: Probe) -> list[str]:
    lines = []
    for kind in AUTHORED:
        model = getattr(models, kind, None)
        if model is None:
            continue
        keywords = found.authoring[kind]
        for name, info in model.model_fields.items():
            if name.rstrip("_") not in keywords:
                lines.append(f"no authoring keyword: {kind}.{_wire(name, info)}")
    return lines
