"""``python -m generator coverage REV``: what a revision defines that the runtime does
not serve, one line each, field by field, read from the runtime's own declarations
(``snodo.server.filled``) and a live probe of a default server (``generator.runtime``),
never from a list kept beside it or from the words its source happens to contain.

Lines start with what they report: ``not served:`` (a request method the default server
answers -32601: its result is the handler's to fill, ``@server.method``), ``never
sent:`` / ``never handled:`` (notifications the runtime does not declare), ``flag never
set:`` (a ``ServerCapabilities`` path the runtime does not advertise by itself:
``Spec(capabilities={...})`` sets it), ``never filled:`` (a result field of a served
method that no handler, nor the core, fills; ``error:`` when the schema requires it),
``no authoring keyword:`` (a field of a listed item no decorator keyword sets and the
runtime does not derive, ``filled.DERIVED``: ``fields={...}`` does) and ``error: the
registry cannot read`` (a definition or fact the runtime reads of every revision, gone).
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from generator.revisions import Revision
from generator.runtime import Probe, import_package, probe, registry_problems
from generator.source import ROOT

LISTED = {
    "tools/list": ("tools", "Tool"),
    "resources/list": ("resources", "Resource"),
    "resources/templates/list": ("resourceTemplates", "ResourceTemplate"),
    "prompts/list": ("prompts", "Prompt"),
}
"""Each list method, the key of its items, and the decorator kind that registers them."""


@dataclass(frozen=True, slots=True)
class Coverage:
    lines: tuple[str, ...]
    errors: int
    """Lines that make the command fail: required fields never filled, definitions the
    registry reads that are gone."""
    unfilled: tuple[str, ...] = ()
    """``Definition.field`` of each required field no runtime code fills: while there
    is one, ``add-revision`` keeps the revision a draft, naming them."""


def _wire(field_name: str, info: Any) -> str:
    return str(info.alias or field_name)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class a field holds (through ``X | MISSING``, ``list[X]`` and
    ``Annotated``)."""
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


def _probe_version(revision: Revision) -> str:
    """Ask in the revision's own version when the runtime speaks it (a draft's too: a
    server serves the versions it is given), else in the newest served version of its
    era (which handlers a method has does not depend on which of the two it is)."""
    from snodo.revisions import REVISIONS  # noqa: PLC0415 (only coverage reads the runtime)

    version = revision.overlay.latest_version
    if version in REVISIONS.by_version or revision.overlay.era is None:
        return version
    served = REVISIONS.versions(revision.overlay.era)
    return served[0] if served else version


def coverage(revision: Revision) -> Coverage:
    if revision.overlay.era is None:
        raise ValueError(f"coverage reads core revisions; {revision.pin.revision} is an extension")
    from snodo.server import filled  # noqa: PLC0415 (only coverage reads the runtime)

    package = import_package(revision.package, ROOT)
    tables, models, protocol = package.tables, package.models, package.protocol
    found = probe(
        _probe_version(revision),
        list(tables.METHODS),
        {
            "protocol_version": getattr(protocol, "META_PROTOCOL_VERSION", ""),
            "client_capabilities": getattr(protocol, "META_CLIENT_CAPABILITIES", ""),
        },
        revision.overlay.era,
    )
    lines: list[str] = [f"not served: {method}" for method in found.unhandled]
    lines += _notifications(tables, filled)
    lines += [
        f"flag never set: {path}"
        for path in _flags(models.ServerCapabilities)
        if path not in filled.FLAGS and not _advertised(found.capabilities, path)
    ]
    unfilled: list[str] = []
    for name, required in _results(tables, found, revision, filled):
        if required:
            unfilled.append(name)
            lines.append(f"error: required field never filled: {name}")
        else:
            lines.append(f"never filled: {name}")
    lines += _authoring(tables, found, filled.DERIVED)
    problems = registry_problems(revision.pin.revision, revision.package, revision.overlay.era)
    lines += [f"error: the registry cannot read {problem}" for problem in problems]
    return Coverage(
        lines=tuple(lines), errors=len(unfilled) + len(problems), unfilled=tuple(unfilled)
    )


def _notifications(tables: Any, filled: Any) -> list[str]:
    lines = []
    kinds = (
        ("never sent", "SERVER_NOTIFICATIONS", filled.SENT),
        ("never handled", "CLIENT_NOTIFICATIONS", filled.HANDLED),
    )
    for kind, table, declared in kinds:
        for method in getattr(tables, table, {}):
            if method not in declared:
                lines.append(f"{kind}: {method}")
    return lines


def _results(tables: Any, found: Probe, revision: Revision, filled: Any) -> list[tuple[str, bool]]:
    """Each result field of a served method nothing fills, and whether it is required."""
    out: list[tuple[str, bool]] = []
    seen: set[tuple[str, str]] = set()
    cache = frozenset(revision.overlay.cache_fields)
    for method, spec in tables.METHODS.items():
        if method in found.unhandled or not hasattr(spec.result, "model_fields"):
            continue  # not served: what its result holds is its handler's
        declared = filled.RESULT_FIELDS.get(method, frozenset())
        legacy = filled.LEGACY_FIELDS.get(method, frozenset())
        answered = found.result_keys.get(method, frozenset())
        fills = (
            declared | legacy | answered | filled.CORE_FIELDS | (cache if spec.cacheable else set())
        )
        for name, info in spec.result.model_fields.items():
            wire = _wire(name, info)
            key = (spec.result.__name__, wire)
            if key in seen or wire in fills:
                continue
            seen.add(key)
            out.append((f"{spec.result.__name__}.{wire}", info.is_required()))
    return out


def _authoring(tables: Any, found: Probe, derived: Any) -> list[str]:
    """Fields of a listed item (``Tool``, ``Resource``, ...) no decorator keyword sets
    and the runtime does not derive (``filled.DERIVED``)."""
    lines = []
    for method, (key, kind) in LISTED.items():
        spec = tables.METHODS.get(method)
        if spec is None or key not in _wire_fields(spec.result):
            continue
        item = _model_of(_wire_fields(spec.result)[key].annotation)
        if item is None:
            continue
        keywords = found.authoring[kind]
        made = derived.get(kind, frozenset())
        for name, info in item.model_fields.items():
            if name.rstrip("_") not in keywords and _wire(name, info) not in made:
                lines.append(f"no authoring keyword: {item.__name__}.{_wire(name, info)}")
    return lines


def _wire_fields(model: Any) -> dict[str, Any]:
    return {_wire(name, info): info for name, info in model.model_fields.items()}
