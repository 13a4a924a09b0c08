"""Which protocol versions a server offers, and the revision that speaks each.

By default every revision the catalog marks served (``snodo.revisions``), newest first;
``Server(versions=[...])`` narrows that to the versions named (a draft revision's too,
when asked for by version), legacy ones included: naming none leaves the server
modern-only. The older ``Spec(supported_versions=)`` narrows the modern versions alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from snodo.revisions import REVISIONS, Revision, Revisions

__all__ = ["offered_revisions"]


def offered_revisions(
    versions: Iterable[str] | None,
    supported_versions: Iterable[str] | None = None,
    registry: Revisions = REVISIONS,
) -> tuple[dict[str, Revision], tuple[str, ...]]:
    """The modern versions offered with their revisions, and the legacy versions offered,
    each newest first; ValueError for a version no revision speaks, or no modern one."""
    if versions is not None and supported_versions is not None:
        raise ValueError("give versions= or Spec(supported_versions=...), not both")
    modern_all = registry.versions("modern")
    legacy_all = registry.versions("legacy")
    if versions is None and supported_versions is None:
        chosen = (*modern_all, *legacy_all)
    else:
        named = tuple(versions if versions is not None else supported_versions or ())
        unknown = [version for version in named if version not in registry.by_version]
        if unknown:
            spoken = ", ".join(registry.by_version)
            raise ValueError(f"no revision speaks {', '.join(unknown)} (known: {spoken})")
        chosen = named if versions is not None else (*named, *legacy_all)
    ordered = [v for r in registry.all for v in r.versions if v in chosen]
    modern = {v: registry.by_version[v] for v in ordered if registry.by_version[v].era == "modern"}
    legacy = tuple(v for v in ordered if registry.by_version[v].era == "legacy")
    if not modern:
        raise ValueError("a server speaks at least one modern protocol version")
    return modern, legacy
