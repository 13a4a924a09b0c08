"""Definition-level comparison of two schemas: what ``diff``, ``upstream`` and the
extension check read.

A definition's meaning is its schema without annotations: two copies that differ only
in ``description`` text validate the same messages, so they are reported apart from
real changes rather than stopping generation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON = Any

_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""Keywords whose value maps names (which may be ``description``) to schemas."""


def without_descriptions(node: JSON) -> JSON:
    """``node`` with every ``description`` annotation dropped; a property *named*
    ``description`` is kept, since it is part of what the schema accepts."""
    if isinstance(node, list):
        return [without_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, JSON] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in _NAME_MAPS and isinstance(value, dict):
            out[key] = {name: without_descriptions(sub) for name, sub in value.items()}
        else:
            out[key] = without_descriptions(value)
    return out


@dataclass(frozen=True, slots=True)
class DefinitionDiff:
    """How the definitions of ``new`` differ from those of ``old``, by name."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    """Definitions whose schema differs beyond descriptions."""
    described: tuple[str, ...]
    """Definitions that differ in descriptions only."""
    renamed: tuple[tuple[str, str], ...]
    """(removed, added) pairs whose schemas are equal beyond descriptions."""

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.described)

    def lines(self) -> list[str]:
        """One line per finding, in the order added, removed, renamed, changed, described."""
        out = [f"added: {name}" for name in self.added]
        out += [f"removed: {name}" for name in self.removed]
        out += [f"renamed: {old} -> {new} (same schema)" for old, new in self.renamed]
        out += [f"changed: {name}" for name in self.changed]
        out += [f"description only: {name}" for name in self.described]
        return out


def diff_definitions(old: JSON, new: JSON) -> DefinitionDiff:
    """Compare the ``$defs`` of two schemas."""
    before: dict[str, JSON] = old.get("$defs", {})
    after: dict[str, JSON] = new.get("$defs", {})
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed, described = [], []
    for name in sorted(set(before) & set(after)):
        if before[name] == after[name]:
            continue
        if without_descriptions(before[name]) == without_descriptions(after[name]):
            described.append(name)
        else:
            changed.append(name)
    bare_added = {name: without_descriptions(after[name]) for name in added}
    renamed = []
    for name in removed:
        body = without_descriptions(before[name])
        same = [other for other, other_body in bare_added.items() if other_body == body]
        if len(same) == 1:
            renamed.append((name, same[0]))
    return DefinitionDiff(
        added=tuple(added),
        removed=tuple(removed),
        changed=tuple(changed),
        described=tuple(described),
        renamed=tuple(renamed),
    )
