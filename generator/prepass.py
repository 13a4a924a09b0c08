"""Meaning-preserving rewrites of the schema before model generation.

Each step exists because datamodel-code-generator would otherwise emit models that
accept or produce something the schema does not mean:

- ``number`` becomes ``["integer", "number"]`` so that 50 stays 50 on a round trip
  instead of coming back as 50.0; the bounds still apply to both.
- inline object schemas are lifted into named definitions (names from the overlay),
  so no class is called ``Error1`` or ``Items2``;
- the overlay's asserted patches are applied, each only if upstream still has the
  value it replaces;
- tagged unions get a ``discriminator`` once every branch is shown to fix the tag;
- TSDoc ``{@link ...}`` markup in descriptions becomes plain code spans;
- a document schema is laid out as the protocol's are: draft-07 ``definitions`` become
  ``$defs``, a reference into the document's own properties becomes a copy of what it
  names, and the document itself is the definition the overlay names.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from generator.overlay import Overlay, OverlayError

JSON = Any

_LINK = re.compile(r"\{@link ([^}]*)\}")


def unnamed_inline(schema: JSON, overlay: Overlay) -> list[str]:
    """The paths of the inline object schemas ``prepare`` would stop on, for want of a
    name in ``overlay`` (``add-revision`` names them)."""
    out = _rewritten(schema, overlay)
    return _lift_inline(out, overlay.inline_names, unnamed_ok=True)


def prepare(schema: JSON, overlay: Overlay) -> JSON:
    out = _rewritten(schema, overlay)
    _lift_inline(out, overlay.inline_names)
    for where, tag in sorted(overlay.discriminators.items()):
        _add_discriminator(out, where, tag)
    defs = out["$defs"]
    names = sorted(defs)
    for name in names:
        _clean_descriptions(defs[name], frozenset(names))
        _describe(defs[name], name)
    out["$defs"] = {name: defs[name] for name in names}
    return out


def _rewritten(schema: JSON, overlay: Overlay) -> JSON:
    """The schema with the overlay's patches and reference replacements applied,
    numbers widened, and an extension's envelopes, copies and branches worked out."""
    out = copy.deepcopy(schema)
    if overlay.document is not None:
        out = _as_definitions(out, overlay.document.root)
    for patch in overlay.patches:
        _apply_patch(out, patch.pointer, patch.expect, patch.value)
    for replace in overlay.replace_refs:
        if not _replace_ref(out, replace.ref, replace.value):
            raise OverlayError(f"[[replace_refs]] {replace.ref} matches nothing in the schema")
    _check_references(out)
    _widen_numbers(out)
    _drop_forbidden(out)
    if overlay.extension is not None or overlay.document is not None:
        _flatten_envelopes(out["$defs"])
        _reference_copies(out, overlay.inline_names)
        for name, branches in sorted(overlay.distribute.items()):
            _distribute(out["$defs"], name, branches)
        for name, branches in sorted(overlay.split_required.items()):
            _split_required(out["$defs"], name, branches)
    return out


_DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema"
_ANNOTATIONS = frozenset({"$ref", "description", "title", "$comment", "example", "examples"})
_DOCUMENT_KEYS = frozenset({"$schema", "$id", "$comment", "title", "$defs", "definitions"})


def _as_definitions(schema: JSON, root: str) -> JSON:
    """A document schema as ``{"$schema": 2020-12, "$defs": {...}}`` with ``root`` among
    the definitions: the same documents valid, in the layout the rest reads."""
    if "definitions" in schema:
        if "$defs" in schema:
            raise OverlayError("the schema has both definitions and $defs")
        schema["$defs"] = schema.pop("definitions")
    _inline_pointers(schema, schema)
    _rename_refs(schema)
    defs: dict[str, JSON] = schema.get("$defs", {})
    body = {k: v for k, v in schema.items() if k not in _DOCUMENT_KEYS}
    if set(body) == {"$ref"}:
        if body["$ref"] != f"#/$defs/{root}":
            raise OverlayError(f"the document is {body['$ref']}, not the [document] root {root}")
    elif body:
        if root in defs:
            raise OverlayError(f"[document] root {root} clashes with a definition")
        defs[root] = body
    elif root not in defs:
        raise OverlayError(f"[document] root {root} is not a definition of the schema")
    _check_ref_siblings(defs)
    for definition in defs.values():
        _drop_defaults(definition)
    return {"$schema": _DRAFT_2020, "$defs": defs}


_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions"})
_SCHEMA_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"}
)


def _drop_defaults(schema: JSON) -> None:
    """A ``default`` says what an absent member means; it validates nothing. A model
    that filled it in would write what the document did not say (and take a null for
    it), so a document's members stay absent when they are."""
    if not isinstance(schema, dict):
        return
    schema.pop("default", None)
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for sub in value.values():
                _drop_defaults(sub)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for sub in value:
                _drop_defaults(sub)
        elif key in _SCHEMA_VALUES:
            _drop_defaults(value)


def _rename_refs(node: JSON) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            node["$ref"] = "#/$defs/" + ref.removeprefix("#/definitions/")
        for value in node.values():
            _rename_refs(value)
    elif isinstance(node, list):
        for value in node:
            _rename_refs(value)


def _inline_pointers(node: JSON, document: JSON) -> None:
    """A ``$ref`` to a place in the document other than a definition (a generated schema
    that names an earlier property again) becomes a copy of that place."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if (
            isinstance(ref, str)
            and ref.startswith("#/")
            and ref.split("/")[1]
            not in (
                "$defs",
                "definitions",
            )
        ):
            parent, key = resolve_pointer(document, ref[1:])
            target = copy.deepcopy(parent[key])
            del node["$ref"]
            node.update(target)
            _inline_pointers(node, document)
            return
        for value in node.values():
            _inline_pointers(value, document)
    elif isinstance(node, list):
        for value in node:
            _inline_pointers(value, document)


def _check_ref_siblings(node: JSON) -> None:
    """In draft-07 a ``$ref`` hides its siblings; in 2020-12 they apply. Annotations mean
    the same either way; anything else would change what the document admits."""
    if isinstance(node, dict):
        if "$ref" in node and set(node) - _ANNOTATIONS:
            raise OverlayError(f"a $ref with validating siblings: {sorted(node)}")
        for value in node.values():
            _check_ref_siblings(value)
    elif isinstance(node, list):
        for value in node:
            _check_ref_siblings(value)


def _check_references(schema: JSON) -> None:
    """Every ``$ref`` names a definition: a removed definition still referred to is
    named here, not met later as a bare KeyError."""
    defs = schema.get("$defs", {})
    missing: dict[str, list[str]] = {}

    def walk(node: JSON, where: str) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = ref.removeprefix("#/$defs/").split("/", 1)[0]
                if target not in defs:
                    missing.setdefault(target, []).append(where)
            for value in node.values():
                walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for name, definition in defs.items():
        walk(definition, name)
    if missing:
        found = "; ".join(
            f"{t} (referred to by {', '.join(sorted(set(w)))})" for t, w in sorted(missing.items())
        )
        raise OverlayError(f"the schema refers to definitions it does not define: {found}")


def _describe(definition: JSON, name: str) -> None:
    """Give an object definition the schema left undescribed a description, so that
    every model class has a docstring (the API reference documents each one)."""
    if "description" not in definition and (
        definition.get("type") == "object" or "properties" in definition or "allOf" in definition
    ):
        definition["description"] = f"``{name}`` as the schema defines it; it has no description."


def resolve_pointer(doc: JSON, pointer: str) -> tuple[JSON, str | int]:
    """The parent of the place a JSON Pointer names, and the key of it there."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    node = doc
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last: str | int = int(parts[-1]) if isinstance(node, list) else parts[-1]
    return node, last


def _replace_ref(node: JSON, ref: str, value: JSON) -> bool:
    """Put ``value`` wherever ``{"$ref": ref}`` stands; whether it stood anywhere."""
    found = False
    if isinstance(node, dict):
        for key, sub in node.items():
            if isinstance(sub, dict) and sub == {"$ref": ref}:
                node[key] = copy.deepcopy(value)
                found = True
            else:
                found = _replace_ref(sub, ref, value) or found
    elif isinstance(node, list):
        for index, sub in enumerate(node):
            if isinstance(sub, dict) and sub == {"$ref": ref}:
                node[index] = copy.deepcopy(value)
                found = True
            else:
                found = _replace_ref(sub, ref, value) or found
    return found


def _escape(key: str) -> str:
    """A key as one JSON Pointer token (RFC 6901): property names may hold "/"."""
    return key.replace("~", "~0").replace("/", "~1")


def _apply_patch(doc: JSON, pointer: str, expect: JSON, value: JSON) -> None:
    try:
        parent, key = resolve_pointer(doc, pointer)
        current = parent[key]
    except (KeyError, IndexError, ValueError, TypeError) as exc:
        raise OverlayError(f"patch target {pointer} no longer exists in the schema") from exc
    if current != expect:
        raise OverlayError(
            f"patch at {pointer} expects {expect!r} but the schema now has {current!r}; "
            "upstream changed it: review and update or drop the patch in the overlay"
        )
    parent[key] = copy.deepcopy(value)


def _drop_forbidden(node: JSON) -> None:
    """A property whose schema is ``{"not": {}}`` may never be present: in a closed
    object, leaving it out of the properties says the same, and no model field is made
    for what no value may fill."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict) and node.get("additionalProperties") is False:
            for name in [k for k, v in properties.items() if v == {"not": {}}]:
                del properties[name]
        for value in node.values():
            _drop_forbidden(value)
    elif isinstance(node, list):
        for item in node:
            _drop_forbidden(item)


def _widen_numbers(node: JSON) -> None:
    if isinstance(node, dict):
        if node.get("type") == "number":
            node["type"] = ["integer", "number"]
        elif isinstance(node.get("type"), list) and "number" in node["type"]:
            types = node["type"]
            if "integer" not in types:
                types.insert(types.index("number"), "integer")
        for value in node.values():
            _widen_numbers(value)
    elif isinstance(node, list):
        for value in node:
            _widen_numbers(value)


def _is_inline_object(node: JSON) -> bool:
    return (
        isinstance(node, dict) and "$ref" not in node and ("properties" in node or "allOf" in node)
    )


def _inline_objects(node: JSON, path: str, parent_key: str | None) -> list[str]:
    """Paths of inline object schemas below a definition, deepest first.

    Branches of an ``allOf`` are not listed: the code generator merges them into the
    enclosing class, which is what they mean.
    """
    found: list[str] = []
    if not isinstance(node, dict):
        return found
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for prop, sub in value.items():
                found += _inline_objects(sub, f"{path}/properties/{_escape(prop)}", "properties")
                if _is_inline_object(sub):
                    found.append(f"{path}/properties/{_escape(prop)}")
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            found += _inline_objects(value, f"{path}/{key}", key)
            if _is_inline_object(value):
                found.append(f"{path}/{key}")
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            for index, sub in enumerate(value):
                found += _inline_objects(sub, f"{path}/{key}/{index}", key)
                if key != "allOf" and _is_inline_object(sub):
                    found.append(f"{path}/{key}/{index}")
    return found


def _lift_inline(schema: JSON, names: dict[str, str], unnamed_ok: bool = False) -> list[str]:
    """Make each named inline object schema a definition of its own, and each unnamed one
    that is an exact copy of a definition (or of one just lifted) a reference to it.

    An extension's schema may repeat the same inline shape in many places (the content
    blocks of a tool result, say): naming one occurrence names them all. What is left
    unnamed and is a copy of nothing is an error, every such path listed at once.
    """
    defs: dict[str, JSON] = schema["$defs"]
    lifted: dict[str, JSON] = {}
    matched: set[str] = set()
    for def_name in sorted(defs):
        for path in _inline_objects(defs[def_name], def_name, None):
            if path not in names:
                continue
            matched.add(path)
            parent, key = resolve_pointer(defs, path)
            sub = parent[key]
            name = names[path]
            if name in defs:
                raise OverlayError(f"inline name {name} for {path} clashes with a definition")
            if name in lifted and lifted[name] != sub:
                raise OverlayError(f"inline name {name} is used for two different schemas")
            lifted[name] = sub
            parent[key] = {"$ref": f"#/$defs/{name}"}
    unused = set(names) - matched
    if unused:
        raise OverlayError(f"[inline_names] entries match nothing: {sorted(unused)}")
    defs.update(lifted)
    changed = True
    while changed:  # a copy replaced by a reference can make its parent a copy in turn
        changed = False
        for def_name in sorted(defs):
            for path in _inline_objects(defs[def_name], def_name, None):
                parent, key = resolve_pointer(defs, path)
                same = _shape_of(defs, parent[key])
                if same is not None and same != def_name:
                    parent[key] = {"$ref": f"#/$defs/{same}"}
                    if same in lifted:  # now a shape of several fields: its first
                        defs[same].pop("description", None)  # field's words fit no other
                    changed = True
                    break
            if changed:
                break
    unnamed = [path for name in sorted(defs) for path in _inline_objects(defs[name], name, None)]
    if unnamed and not unnamed_ok:
        listed = "\n  ".join(unnamed)
        raise OverlayError(
            f"inline schemas with no name (add them to [inline_names] in the overlay):\n  {listed}"
        )
    return unnamed


def _reference_copies(schema: JSON, names: dict[str, str]) -> None:
    """Replace unnamed inline copies of definitions with references to them.

    An extension schema repeats its definitions inline (DetailedTask's branches are
    WorkingTask, ...); a reference means the same and keeps one class per shape.
    Repeated until nothing changes, since replacing an inner copy can make an outer
    schema a copy in turn.
    """
    defs: dict[str, JSON] = schema["$defs"]
    changed = True
    while changed:
        changed = False
        for def_name in sorted(defs):
            for path in _inline_objects(defs[def_name], def_name, None):
                if path in names:
                    continue
                parent, key = resolve_pointer(defs, path)
                same = _copy_of(defs, parent[key])
                if same is not None and same != def_name:
                    parent[key] = {"$ref": f"#/$defs/{same}"}
                    changed = True


_ENVELOPES = ("JSONRPCRequest", "JSONRPCNotification")


def _flatten_envelopes(defs: dict[str, JSON]) -> None:
    """``allOf: [JSONRPCRequest, {method, params}]`` becomes one object schema with the
    envelope's properties and the narrowed ones: the same values (neither part closes
    its properties), and a class whose ``params`` is the narrowed model rather than a
    subclass that contradicts its base's field type."""
    for name in sorted(defs):
        parts = defs[name].get("allOf", [])
        if len(parts) != 2 or parts[0].get("$ref", "").rsplit("/", 1)[-1] not in _ENVELOPES:
            continue
        base = defs[parts[0]["$ref"].rsplit("/", 1)[-1]]
        narrow = parts[1]
        if base.get("additionalProperties") is False or narrow.get("additionalProperties") is False:
            raise OverlayError(f"{name}: a closed envelope cannot be flattened")
        kept = {k: v for k, v in defs[name].items() if k != "allOf"}
        defs[name] = {
            **kept,
            "type": "object",
            "properties": {**base.get("properties", {}), **narrow.get("properties", {})},
            "required": sorted(set(base.get("required", [])) | set(narrow.get("required", []))),
        }


def _distribute(defs: dict[str, JSON], name: str, branches: list[str]) -> None:
    """``allOf: [A, anyOf: [B1, ..., Bn], C...]`` becomes ``anyOf: [N1, ..., Nn]`` with
    each named ``Ni = allOf: [A, Bi, C...]``: the same values, and one named class per
    branch instead of the numbered ones the code generator would invent."""
    parts = defs.get(name, {}).get("allOf", [])
    unions = [i for i, p in enumerate(parts) if "anyOf" in _deref({"$defs": defs}, p)]
    if len(unions) != 1:
        raise OverlayError(f"[distribute] {name} is no longer an allOf with one anyOf part")
    options = _deref({"$defs": defs}, parts[unions[0]])["anyOf"]
    if len(options) != len(branches):
        raise OverlayError(f"[distribute] {name} has {len(options)} branches, not {len(branches)}")
    for branch, option in zip(branches, options, strict=True):
        if branch in defs:
            raise OverlayError(f"[distribute] name {branch} clashes with a definition")
        defs[branch] = {"allOf": [option if i == unions[0] else p for i, p in enumerate(parts)]}
    kept = {k: v for k, v in defs[name].items() if k not in ("allOf", "$schema")}
    defs[name] = {**kept, "anyOf": [{"$ref": f"#/$defs/{b}"} for b in branches]}


def _member(defs: dict[str, JSON], node: JSON, name: str) -> JSON | None:
    """The schema ``node`` (through references and ``allOf``) gives the member ``name``."""
    node = _deref({"$defs": defs}, node)
    if name in node.get("properties", {}):
        return node["properties"][name]
    for part in node.get("allOf", []):
        found = _member(defs, part, name)
        if found is not None:
            return found
    return None


def _split_required(defs: dict[str, JSON], name: str, branches: list[str]) -> None:
    """``allOf: [A, {P, anyOf: [{required: [x]}, {required: [y]}]}]`` becomes ``anyOf:
    [N1, N2]``, each ``Ni = allOf: [A, P + required xi]``: the same values (A and P and
    one of the alternatives). A required member that P does not name but A does is
    repeated in P as A gives it, so that the branch's class requires it: the code
    generator otherwise splits the rule into numbered classes of its own, inheriting
    the member twice, once optional."""
    parts = defs.get(name, {}).get("allOf", [])
    found = [i for i, p in enumerate(parts) if "anyOf" in p and "$ref" not in p]
    options = parts[found[0]]["anyOf"] if len(found) == 1 else []
    if not options or any(set(o) != {"required"} for o in options):
        raise OverlayError(f"[split_required] {name} is no longer an allOf part of required lists")
    if len(options) != len(branches):
        raise OverlayError(f"[split_required] {name} has {len(options)} rules, not {len(branches)}")
    index = found[0]
    for branch, option in zip(branches, options, strict=True):
        if branch in defs:
            raise OverlayError(f"[split_required] name {branch} clashes with a definition")
        part = {k: copy.deepcopy(v) for k, v in parts[index].items() if k != "anyOf"}
        properties = part.setdefault("properties", {})
        for member in option["required"]:
            if member not in properties:
                given = next(
                    (m for other in parts if (m := _member(defs, other, member)) is not None),
                    None,
                )
                if given is None:
                    raise OverlayError(f"[split_required] {name} names no member {member}")
                properties[member] = copy.deepcopy(given)
        part["required"] = sorted({*part.get("required", []), *option["required"]})
        defs[branch] = {"allOf": [part if i == index else p for i, p in enumerate(parts)]}
    kept = {k: v for k, v in defs[name].items() if k != "allOf"}
    defs[name] = {**kept, "anyOf": [{"$ref": f"#/$defs/{b}"} for b in branches]}


def _copy_of(defs: dict[str, JSON], sub: JSON) -> str | None:
    """The definition ``sub`` is an inline copy of (ignoring ``$schema``), if any."""
    for name in sorted(defs):
        body = {k: v for k, v in defs[name].items() if k != "$schema"}
        if body == sub:
            return name
    return None


_USE_SITE = frozenset({"description", "$schema", "$defs"})
"""What a use of a shape may add without making it another shape: the field's own
description, and the generator's bookkeeping."""


def _shape_of(defs: dict[str, JSON], sub: JSON) -> str | None:
    """The definition whose shape ``sub`` repeats, ignoring ``_USE_SITE`` keys."""
    body = {k: v for k, v in sub.items() if k not in _USE_SITE}
    for name in sorted(defs):
        if {k: v for k, v in defs[name].items() if k not in _USE_SITE} == body:
            return name
    return None


def _deref(schema: JSON, node: JSON) -> JSON:
    while isinstance(node, dict) and "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _add_discriminator(schema: JSON, where: str, tag: str) -> None:
    try:
        parent, key = resolve_pointer(schema["$defs"], where)
        union = _deref(schema, parent[key])
    except (KeyError, IndexError, ValueError) as exc:
        raise OverlayError(f"discriminated union {where} no longer exists") from exc
    branches = union.get("anyOf") or union.get("oneOf")
    if not branches:
        raise OverlayError(f"{where} is no longer a union")
    for branch in branches:
        prop = _deref(schema, branch).get("properties", {}).get(tag, {})
        if "const" not in prop:
            raise OverlayError(f"a branch of {where} does not fix {tag!r} with a const")
    union["discriminator"] = {"propertyName": tag}


def _link_text(match: re.Match[str], names: frozenset[str]) -> str:
    text = match.group(1).strip()
    if "|" in text:
        return f"`{text.split('|', 1)[1].strip()}`"
    if text in names:
        return f"`{text}`"
    # The published schema lost the "Name | label" separator: "CallToolRequesttools/call".
    for name in sorted(names, key=len, reverse=True):
        if text.startswith(name):
            return f"`{text[len(name) :]}`"
    return f"`{text}`"


def _clean_descriptions(node: JSON, names: frozenset[str]) -> None:
    if isinstance(node, dict):
        description = node.get("description")
        if isinstance(description, str):
            node["description"] = _LINK.sub(lambda m: _link_text(m, names), description)
        for value in node.values():
            _clean_descriptions(value, names)
    elif isinstance(node, list):
        for value in node:
            _clean_descriptions(value, names)
