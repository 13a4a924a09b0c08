"""What a revision adds, given by an author, sent only to the revisions that define it.

Two ways in: ``Server(spec=Spec(capabilities={...}))``, capability flags merged into what the server
advertises (``{"tools": {"validate": True}}``), and ``fields={...}`` on the decorators,
fields of a listed item's definition (``@server.tool(fields={"deprecated": True})``).
Each is checked when given: a flag or field that no revision the server serves defines
is an error then, naming it. On the wire, each revision's answers say only what its
models define: capabilities are shaped by the revision (``Revision.capabilities``), and
a list's items keep only the fields of the revision's item model (``shaped_items``),
whenever some item was given fields or the revision is not the one the definitions are
built for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from snodo.revisions import CARRIED, Revision, Shape

__all__ = ["LISTS", "Kind", "check_fields", "check_flags", "merged", "shaped_items"]

Kind = Literal["tools", "resources", "templates", "prompts"]

LISTS: Mapping[Kind, tuple[str, str]] = {
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "templates": ("resources/templates/list", "resourceTemplates"),
    "prompts": ("prompts/list", "prompts"),
}
"""Each kind of listed item: the method that lists it, and the key of its items."""


def _paths(flags: Mapping[str, Any], prefix: str = "") -> list[str]:
    found = []
    for key, value in flags.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            found += _paths(value, f"{path}.")
        else:
            found.append(path)
    return found


def _defines(shape: Shape, path: str) -> bool:
    node: Shape | None = shape
    for index, part in enumerate(path.split(".")):
        if node is None:
            return True  # any value there (experimental's, say)
        if part not in node:
            return index == 0 and part in CARRIED
        node = node[part]
    return True


def check_flags(flags: Mapping[str, Any], revisions: Iterable[Revision]) -> dict[str, Any]:
    """``flags`` as given, or ValueError naming a flag no revision of ``revisions``
    defines."""
    served = list(revisions)
    for path in _paths(flags):
        if not any(_defines(revision.capability_shape, path) for revision in served):
            versions = ", ".join(revision.version for revision in served)
            raise ValueError(
                f"capabilities: {path} is a flag no served revision defines ({versions})"
            )
    return {key: value for key, value in flags.items()}


def merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, object by object."""
    out = dict(base)
    for key, value in extra.items():
        inner = out.get(key)
        out[key] = (
            merged(inner, value)
            if isinstance(inner, Mapping) and isinstance(value, Mapping)
            else value
        )
    return out


def check_fields(
    kind: Kind,
    name: str,
    fields: Mapping[str, Any] | None,
    definition: Mapping[str, Any],
    revisions: Iterable[Revision],
) -> dict[str, Any]:
    """The fields an item ``name`` of ``kind`` is given, or ValueError naming one its
    definition already has or that no revision of ``revisions`` defines for it."""
    if not fields:
        return {}
    method, key = LISTS[kind]
    served = list(revisions)
    defined = [revision.item_fields(method, key) or frozenset() for revision in served]
    for field in fields:
        if field in definition:
            raise ValueError(f"{name}: fields= gives {field!r}, which it has already")
        if not any(field in names for names in defined):
            versions = ", ".join(revision.version for revision in served)
            raise ValueError(
                f"{name}: fields= gives {field!r}, which no served revision defines "
                f"for its definition ({versions})"
            )
    return dict(fields)


def shaped_items(items: list[Any], kind: Kind, revision: Revision) -> list[Any]:
    """``items`` with only the fields ``revision`` defines for them."""
    method, key = LISTS[kind]
    defined = revision.item_fields(method, key)
    if defined is None:
        return items
    return [
        item
        if not isinstance(item, Mapping) or item.keys() <= defined
        else {name: value for name, value in item.items() if name in defined}
        for item in items
    ]
