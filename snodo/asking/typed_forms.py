"""Forms from types: a pydantic model or a dataclass as the restricted form schema.

``elicitation.form(message, Model)`` compiles ``Model`` here, once, when the form is
built. Each field becomes one property of the flat schema form-mode elicitation allows
(client/elicitation.mdx, "Requested Schema"):

- ``str``: a string, with ``min_length``/``max_length``, and a ``format`` of ``email``,
  ``uri``, ``date`` or ``date-time`` (``datetime.date``, ``datetime.datetime``, pydantic's
  URL types, or ``Field(json_schema_extra={"format": ...})``);
- ``int``/``float``: an integer or number, with ``ge``/``le`` as inclusive bounds;
- ``bool``: a boolean;
- ``Literal["a", "b"]`` or a string ``Enum``: a single choice;
- ``list[Literal[...]]`` (or of a string ``Enum``): a multi-select, with
  ``min_length``/``max_length`` as the number of choices;
- ``T | None``: ``T``, and the user may leave it empty.

Titles and descriptions come from ``Field(title=..., description=...)``, defaults from
the field's default. Anything the subset cannot say (a nested model, a list of objects, a
union, a dict, an exclusive bound, another format) raises ``ValueError`` naming the
model and the field. The user's answer, once checked against the schema, is validated
into the model and comes back as an instance of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.json_schema import GenerateJsonSchema

from snodo.asking.form_schema import FORMATS

__all__ = ["FormModel", "form_model", "is_form_model"]

_KEPT = {
    "string": ("title", "description", "default", "minLength", "maxLength", "format"),
    "integer": ("title", "description", "default", "minimum", "maximum"),
    "number": ("title", "description", "default", "minimum", "maximum"),
    "boolean": ("title", "description", "default"),
}
_REFUSED = ("exclusiveMinimum", "exclusiveMaximum", "pattern", "multipleOf", "const")


class _Untitled(GenerateJsonSchema):
    """pydantic's schema without the titles it makes up from field names."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class FormModel:
    """A model compiled to a form: its schema, and how an answer becomes an instance."""

    kind: type
    schema: dict[str, Any]
    adapter: TypeAdapter[Any]

    def instance(self, content: Mapping[str, Any]) -> Any:
        """The checked answer as an instance of the model; ``ValueError`` when the
        model's own validation refuses it."""
        try:
            return self.adapter.validate_python(dict(content))
        except ValidationError as exc:
            raise ValueError(str(exc.errors(include_input=False)[0]["msg"])) from None


def is_form_model(value: object) -> bool:
    """Whether ``value`` is a class a form can be built from."""
    return isinstance(value, type) and (
        issubclass(value, BaseModel) or dataclasses.is_dataclass(value)
    )


def form_model(kind: type) -> FormModel:
    """``kind`` compiled to the restricted form schema; ValueError naming the field for
    what the subset cannot express."""
    adapter: TypeAdapter[Any] = TypeAdapter(kind)
    name = kind.__name__
    full = adapter.json_schema(schema_generator=_Untitled, mode="validation")
    defs = full.get("$defs", {})
    properties: dict[str, Any] = {}
    for field, prop in (full.get("properties") or {}).items():
        properties[field], _ = _property(prop, defs, f"form {name}: field {field!r}")
    required = [f for f in full.get("required", []) if not _nullable(full["properties"][f])]
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return FormModel(kind, schema, adapter)


def _resolved(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = dict(defs.get(ref.removeprefix("#/$defs/"), {}))
        target.pop("title", None)  # the class's name, not a title the author gave
        return {**target, **{key: value for key, value in prop.items() if key != "$ref"}}
    return dict(prop)


def _nullable(prop: Mapping[str, Any]) -> bool:
    return any(option == {"type": "null"} for option in prop.get("anyOf", ()))


def _property(prop: Mapping[str, Any], defs: Mapping[str, Any], where: str) -> tuple[Any, bool]:
    """One field's form property, and whether it may be left empty."""
    prop = _resolved(prop, defs)
    options = prop.get("anyOf")
    if options is not None:
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) != 1 or len(kept) == len(options):
            raise ValueError(f"{where}: a union cannot be a form field (only T | None)")
        inner = {**_resolved(kept[0], defs)}
        for key in ("title", "description"):
            if key in prop:
                inner[key] = prop[key]
        if prop.get("default") is not None:
            inner["default"] = prop["default"]
        return _property(inner, defs, where)[0], True
    for key in _REFUSED:
        if key in prop:
            raise ValueError(f"{where}: {key} cannot be said in a form")
    if "enum" in prop:
        return _choice(prop, where), False
    kind = prop.get("type")
    if kind == "array":
        return _multi(prop, defs, where), False
    if kind not in _KEPT:
        what = "a nested object" if kind == "object" or "properties" in prop else repr(kind)
        raise ValueError(f"{where}: {what} cannot be a form field")
    if "format" in prop and prop["format"] not in FORMATS:
        raise ValueError(f"{where}: format {prop['format']!r} cannot be said in a form")
    out = {"type": kind}
    out.update({key: prop[key] for key in _KEPT[kind] if key in prop})
    return out, False


def _choice(prop: Mapping[str, Any], where: str) -> dict[str, Any]:
    values = prop["enum"]
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"{where}: the choices of a form field are strings")
    out: dict[str, Any] = {"type": "string", "enum": list(values)}
    for key in ("title", "description", "default"):
        if key in prop:
            out[key] = prop[key]
    return out


def _multi(prop: Mapping[str, Any], defs: Mapping[str, Any], where: str) -> dict[str, Any]:
    items = _resolved(prop.get("items") or {}, defs)
    if "enum" not in items or not all(isinstance(v, str) for v in items["enum"]):
        raise ValueError(f"{where}: a list in a form is a list of string choices")
    out: dict[str, Any] = {"type": "array", "items": {"type": "string", "enum": items["enum"]}}
    for wire, key in (("minItems", "minItems"), ("maxItems", "maxItems")):
        if key in prop:
            out[wire] = prop[key]
    for key in ("title", "description", "default"):
        if key in prop:
            out[key] = prop[key]
    return out
