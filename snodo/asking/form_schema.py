"""The restricted form-schema subset of form-mode elicitation: compiled, then checked.

client/elicitation.mdx ("Requested Schema") allows a flat object of primitive
properties only: strings (length, the formats in ``FORMATS``), numbers and integers
(bounds), booleans, and single- or multi-select enums, titled or not, with defaults.
``check_schema`` compiles a schema into a ``CheckedSchema`` (a copy of the schema plus
what each property accepts), raising ``ValueError`` that names the offending path for
anything outside the subset. ``check_content`` checks a submitted answer against it,
raising ``RejectedValueError`` whose reason never quotes the value (the rules are in
``snodo.asking.elicitation``'s module docstring).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypeGuard

__all__ = [
    "FORMATS",
    "CheckedSchema",
    "Field",
    "FormValue",
    "RejectedValueError",
    "check_content",
    "check_schema",
    "check_value",
]

FORMATS = frozenset({"email", "uri", "date", "date-time"})
"""The string formats the form subset allows (schema.json, StringSchema.format)."""

FormValue: TypeAlias = str | int | float | bool | list[str]
"""One checked form answer; schema.json ElicitResult.content values."""


# --- the restricted schema -----------------------------------------------------------

_Kind = Literal["string", "number", "integer", "boolean", "single", "multi"]


@dataclass(frozen=True, slots=True)
class Field:
    """What one property accepts, distilled from its schema."""

    kind: _Kind
    options: tuple[str, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_items: int | None = None
    max_items: int | None = None


@dataclass(frozen=True, slots=True)
class CheckedSchema:
    schema: dict[str, Any]
    fields: dict[str, Field]
    required: tuple[str, ...]
    model: Any = None
    """The ``snodo.asking.typed_forms.FormModel`` the schema was built from, if any: a checked
    answer becomes an instance of it."""


_TOP_KEYS = frozenset({"$schema", "type", "properties", "required"})
_COMMON = frozenset({"type", "title", "description", "default"})
# Allowed keywords per property kind: schema.json PrimitiveSchemaDefinition's eight defs.
_ALLOWED: Mapping[str, frozenset[str]] = {
    "string": _COMMON | {"minLength", "maxLength", "format"},
    "number": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "untitled single-select": _COMMON | {"enum"},
    "legacy titled single-select": _COMMON | {"enum", "enumNames"},
    "titled single-select": _COMMON | {"oneOf"},
    "multi-select": _COMMON | {"items", "minItems", "maxItems"},
}


def check_schema(schema: object) -> CheckedSchema:
    path = "requestedSchema"
    if not isinstance(schema, Mapping):
        raise ValueError(f"{path}: must be an object")
    for key in schema:
        if key not in _TOP_KEYS:
            raise ValueError(f"{path}: unsupported keyword {key!r}")
    if schema.get("type") != "object":
        raise ValueError(f"{path}.type: must be 'object'")
    if "$schema" in schema and not isinstance(schema["$schema"], str):
        raise ValueError(f"{path}.$schema: must be a string")
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        raise ValueError(f"{path}.properties: must be an object")
    fields: dict[str, Field] = {}
    copied: dict[str, Any] = {}
    for name, prop in properties.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"{path}.properties: names must be non-empty strings")
        copied[name], fields[name] = _check_property(prop, f"{path}.properties.{name}")
    required: list[str] = []
    if "required" in schema:
        required = _string_list(schema["required"], f"{path}.required", allow_empty=True)
        for name in required:
            if name not in fields:
                raise ValueError(f"{path}.required: {name!r} is not a property")
    checked = {"properties": copied, "required": required}
    out = {key: checked.get(key, schema[key]) for key in schema}  # the caller's key order
    return CheckedSchema(out, fields, tuple(required))


def _check_property(prop: object, path: str) -> tuple[dict[str, Any], Field]:
    if not isinstance(prop, Mapping):
        raise ValueError(f"{path}: must be an object")
    type_ = prop.get("type")
    if type_ == "string":
        if "enum" in prop and "oneOf" in prop:
            raise ValueError(f"{path}: use either enum or oneOf, not both")
        if "enum" in prop:
            shape = (
                "legacy titled single-select" if "enumNames" in prop else "untitled single-select"
            )
        elif "oneOf" in prop:
            shape = "titled single-select"
        else:
            shape = "string"
    elif type_ in ("number", "integer"):
        shape = "number"
    elif type_ == "boolean":
        shape = "boolean"
    elif type_ == "array":
        shape = "multi-select"
    else:
        raise ValueError(
            f"{path}.type: must be 'string', 'number', 'integer', 'boolean' or 'array'"
        )
    allowed = _ALLOWED[shape]
    for key in prop:
        if key not in allowed:
            raise ValueError(f"{path}: unsupported keyword {key!r} for a {shape} property")

    out = {key: _keyword(key, value, f"{path}.{key}") for key, value in prop.items()}
    values = {key: value for key, value in out.items() if key != "default"}

    _check_bounds(values, "minLength", "maxLength", path)
    _check_bounds(values, "minimum", "maximum", path)
    _check_bounds(values, "minItems", "maxItems", path)

    options: tuple[str, ...] = ()
    kind: _Kind
    if shape == "string":
        kind = "string"
    elif shape == "number":
        kind = "integer" if type_ == "integer" else "number"
    elif shape == "boolean":
        kind = "boolean"
    elif shape == "multi-select":
        kind = "multi"
        items = values["items"] if "items" in values else _items(None, f"{path}.items")
        options = tuple(items["enum"]) if "enum" in items else _consts(items["anyOf"])
        if values.get("minItems", 0) > len(options):
            raise ValueError(f"{path}.minItems: more than the {len(options)} options")
    else:
        kind = "single"
        options = _consts(values["oneOf"]) if "oneOf" in values else tuple(values["enum"])
        if "enumNames" in values and len(values["enumNames"]) != len(options):
            raise ValueError(f"{path}.enumNames: must have one name per enum value")

    checked = Field(
        kind=kind,
        options=options,
        min_length=values.get("minLength"),
        max_length=values.get("maxLength"),
        format=values.get("format"),
        minimum=values.get("minimum"),
        maximum=values.get("maximum"),
        min_items=values.get("minItems"),
        max_items=values.get("maxItems"),
    )
    if "default" in prop:
        try:
            out["default"] = _check_value(checked, prop["default"])
        except RejectedValueError as exc:
            raise ValueError(f"{path}.default: {exc}") from None
    return out, checked


def _keyword(key: str, value: object, path: str) -> Any:
    """One keyword's value, checked and copied; ``default`` is checked once the rest is."""
    if key in ("title", "description") and not isinstance(value, str):
        raise ValueError(f"{path}: must be a string")
    if key in ("type", "default"):
        return value
    if key == "format":
        if not isinstance(value, str) or value not in FORMATS:
            raise ValueError(f"{path}: must be one of {sorted(FORMATS)}")
    elif key in ("minLength", "maxLength", "minItems", "maxItems"):
        if not _is_int(value) or value < 0:
            raise ValueError(f"{path}: must be a non-negative integer")
    elif key in ("minimum", "maximum"):
        if not _is_number(value):
            raise ValueError(f"{path}: must be a finite number")
    elif key == "enum":
        return _string_list(value, path, allow_empty=False)
    elif key == "enumNames":
        return _string_list(value, path, allow_empty=False, unique=False)
    elif key == "oneOf":
        return _options(value, path)
    elif key == "items":
        return _items(value, path)
    return value


def _check_bounds(values: Mapping[str, Any], low: str, high: str, path: str) -> None:
    if low in values and high in values and values[low] > values[high]:
        raise ValueError(f"{path}: {low} is greater than {high}")


def _string_list(value: object, path: str, *, allow_empty: bool, unique: bool = True) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{path}: must be a list of strings")
    if not value and not allow_empty:
        raise ValueError(f"{path}: must not be empty")
    if unique:
        _unique(value, path)
    return list(value)


def _unique(values: list[str] | tuple[str, ...], path: str) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"{path}: values must be unique")


def _options(value: object, path: str) -> list[dict[str, str]]:
    """A titled option list: ``[{"const": ..., "title": ...}, ...]``, both required."""
    if not isinstance(value, list | tuple) or not value:
        raise ValueError(f"{path}: must be a non-empty list of {{const, title}} objects")
    out: list[dict[str, str]] = []
    for index, option in enumerate(value):
        where = f"{path}[{index}]"
        if not isinstance(option, Mapping) or set(option) != {"const", "title"}:
            raise ValueError(f"{where}: must be an object with exactly 'const' and 'title'")
        if not isinstance(option["const"], str) or not isinstance(option["title"], str):
            raise ValueError(f"{where}: const and title must be strings")
        out.append({key: option[key] for key in option})
    _unique([option["const"] for option in out], f"{path} consts")
    return out


def _items(value: object, path: str) -> dict[str, Any]:
    """Multi-select items: ``{"type": "string", "enum": [...]}`` or ``{"anyOf": [...]}``."""
    if isinstance(value, Mapping) and set(value) == {"type", "enum"}:
        if value["type"] != "string":
            raise ValueError(f"{path}.type: must be 'string'")
        enum = _string_list(value["enum"], f"{path}.enum", allow_empty=False)
        return {key: enum if key == "enum" else value[key] for key in value}
    if isinstance(value, Mapping) and set(value) == {"anyOf"}:
        return {"anyOf": _options(value["anyOf"], f"{path}.anyOf")}
    raise ValueError(f"{path}: must be {{'type': 'string', 'enum': [...]}} or {{'anyOf': [...]}}")


def _consts(options: list[dict[str, str]]) -> tuple[str, ...]:
    return tuple(option["const"] for option in options)


# --- checking values -----------------------------------------------------------------


class RejectedValueError(ValueError):
    """A value does not satisfy its property; the reason never quotes the value."""


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def check_value(spec: Field, value: object) -> FormValue:
    """One field's answer, checked as ``check_content`` checks it (for a client that
    asks field by field): the value, or ``RejectedValueError``."""
    return _check_value(spec, value)


def _check_value(spec: Field, value: object) -> FormValue:
    """``value`` if it satisfies ``spec`` (lists copied), else ``RejectedValueError``."""
    if spec.kind == "boolean":
        if not isinstance(value, bool):
            raise RejectedValueError("must be a boolean")
        return value
    if spec.kind in ("number", "integer"):
        if spec.kind == "integer" and not _is_int(value):
            raise RejectedValueError("must be an integer")
        if not _is_number(value):
            raise RejectedValueError("must be a finite number")
        if spec.minimum is not None and value < spec.minimum:
            raise RejectedValueError("is below the minimum")
        if spec.maximum is not None and value > spec.maximum:
            raise RejectedValueError("is above the maximum")
        return value
    if spec.kind == "multi":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RejectedValueError("must be a list of strings")
        if any(v not in spec.options for v in value):
            raise RejectedValueError("contains a value that is not an option")
        if len(set(value)) != len(value):
            raise RejectedValueError("repeats an option")
        if spec.min_items is not None and len(value) < spec.min_items:
            raise RejectedValueError("has too few items")
        if spec.max_items is not None and len(value) > spec.max_items:
            raise RejectedValueError("has too many items")
        return list(value)
    if not isinstance(value, str):
        raise RejectedValueError("must be a string")
    if spec.kind == "single":
        if value not in spec.options:
            raise RejectedValueError("is not one of the options")
        return value
    if spec.min_length is not None and len(value) < spec.min_length:
        raise RejectedValueError("is shorter than minLength")
    if spec.max_length is not None and len(value) > spec.max_length:
        raise RejectedValueError("is longer than maxLength")
    if spec.format is not None and not _FORMAT_CHECKS[spec.format](value):
        raise RejectedValueError(f"is not a valid {spec.format}")
    return value


_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+"
)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


def _is_email(value: str) -> bool:
    local, at, domain = value.rpartition("@")
    if not at or not local or "@" in local or _CONTROL.search(value):
        return False
    return all(domain.split("."))


def _is_uri(value: str) -> bool:
    return _URI.fullmatch(value) is not None


def _is_calendar_date(year: str, month: str, day: str) -> bool:
    try:
        datetime.date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


def _is_date(value: str) -> bool:
    match = _DATE.fullmatch(value)
    return match is not None and _is_calendar_date(*match.groups())


def _is_date_time(value: str) -> bool:
    match = _DATE_TIME.fullmatch(value)
    if match is None:
        return False
    year, month, day, hour, minute, second, off_hour, off_minute = match.groups()
    if not _is_calendar_date(year, month, day):
        return False
    if int(hour) > 23 or int(minute) > 59 or int(second) > 60:
        return False
    return off_hour is None or (int(off_hour) <= 23 and int(off_minute) <= 59)


_FORMAT_CHECKS = {"email": _is_email, "uri": _is_uri, "date": _is_date, "date-time": _is_date_time}


def check_content(checked: CheckedSchema, content: object) -> dict[str, FormValue]:
    if not isinstance(content, (dict, Mapping)):  # dict first: the ABC check is a Python call
        raise RejectedValueError("content must be an object")
    for name in checked.required:
        if name not in content:
            raise RejectedValueError("a required property is missing")
    return {
        name: _check_value(spec, content[name])
        for name, spec in checked.fields.items()
        if name in content
    }
