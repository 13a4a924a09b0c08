"""A translated revision written as its changes to a pinned base revision.

A draft that publishes no JSON schema but changes a few definitions of a revision that
does (SEP-3279 over 2026-07-28) is committed as those changes alone, in
``schema/<revision>/translation.json``, so no upstream schema is ever copied into the
repository. The file holds:

- ``added``: definitions the base lacks, in full;
- ``replaced``: definitions of the base given anew, in full;
- ``removed``: names of the base's definitions the revision drops;
- ``edited``: per definition of the base, ``addProperties`` (new properties in full),
  ``removeProperties`` (names) and ``required`` (the whole new list).

Composing checks every name against the base, so a translation that no longer fits its
base says where. The composed schema is written as the project writes a schema
(``dump``), so the pin's sha256 holds it byte for byte.
"""

from __future__ import annotations

import copy
import json
from typing import Any

_PARTS = frozenset({"added", "replaced", "removed", "edited"})
_EDITS = frozenset({"addProperties", "removeProperties", "required"})


class TranslationError(Exception):
    """The translation does not fit its base revision's schema."""


def compose(base: dict[str, Any], translation: dict[str, Any]) -> dict[str, Any]:
    """The base schema with the translation's changes applied; the base is left as is."""
    unknown = sorted(set(translation) - _PARTS)
    if unknown:
        raise TranslationError(f"unknown parts {unknown}; a translation has {sorted(_PARTS)}")
    schema = copy.deepcopy(base)
    defs: dict[str, Any] = schema["$defs"]
    for name, body in translation.get("added", {}).items():
        if name in defs:
            raise TranslationError(f"added {name} is defined by the base already: replace it")
        defs[name] = body
    for name, body in translation.get("replaced", {}).items():
        _existing(defs, name, "replaced")
        defs[name] = body
    for name in translation.get("removed", []):
        _existing(defs, name, "removed")
        del defs[name]
    for name, edit in translation.get("edited", {}).items():
        _edit(_existing(defs, name, "edited"), name, edit)
    return schema


def _existing(defs: dict[str, Any], name: str, part: str) -> dict[str, Any]:
    if name not in defs:
        raise TranslationError(f"{part} {name} is not a definition of the base")
    found: dict[str, Any] = defs[name]
    return found


def _edit(definition: dict[str, Any], name: str, edit: dict[str, Any]) -> None:
    unknown = sorted(set(edit) - _EDITS)
    if unknown:
        raise TranslationError(f"edited {name}: unknown keys {unknown}; use {sorted(_EDITS)}")
    properties: dict[str, Any] = definition.setdefault("properties", {})
    for key in edit.get("removeProperties", []):
        if key not in properties:
            raise TranslationError(f"edited {name}: removes {key}, which the base lacks")
        del properties[key]
    for key, body in edit.get("addProperties", {}).items():
        if key in properties:
            raise TranslationError(f"edited {name}: adds {key}, which the base has already")
        properties[key] = body
    if "required" in edit:
        missing = sorted(set(edit["required"]) - set(properties))
        if missing:
            raise TranslationError(f"edited {name}: requires {missing}, which it does not have")
        definition["required"] = list(edit["required"])


def dump(schema: dict[str, Any]) -> bytes:
    """A schema as the project writes one: sorted keys, four-space indent, final newline."""
    return (json.dumps(schema, indent=4, sort_keys=True) + "\n").encode()
