"""Ask the user for input through the client: ``elicitation/create`` input requests.

A handler builds a request with :func:`form` or :func:`url`, returns it through
``snodo.result.input_required``, and on the retry reads the answer with
:func:`response`. Nothing waits in between (basic/patterns/mrtr.mdx).

Form mode puts every answer through the client, so it MUST NOT collect secrets:
passwords, API keys, access tokens or payment credentials go through URL mode, where
the user deals with the server directly (client/elicitation.mdx, "Security").

Errors split the h11 way: a request the handler built wrong raises ``ValueError`` at
build time, naming the offending path; an answer the client sent wrong raises
``InvalidParams`` (-32602) whose message never repeats what was submitted.

Form answers are checked against the requested schema (client/elicitation.mdx: servers
SHOULD validate received data):

- every ``required`` property is present; properties not in the schema are dropped, as
  the spec asks of data a server does not recognise (basic/patterns/mrtr.mdx, "Error
  Handling"), so a handler only ever sees checked values;
- types are exact: ``true`` is not an integer, ``3.0`` is not an integer (snodo never
  changes a number's type silently), a ``number`` takes any finite int or float;
- ``minLength``/``maxLength`` count code points, ``minimum``/``maximum`` are inclusive;
- single-select values must be one of the options; multi-select answers are lists of
  distinct options whose length respects ``minItems``/``maxItems`` (a selection is a
  set, so a repeated option cannot satisfy ``minItems``);
- formats are syntactic checks only, not deliverability or reachability:
  ``email`` is ``local@domain`` with one ``@``, a non-empty local part, a domain of
  non-empty dot-separated labels, no whitespace or control characters; ``uri`` is an
  absolute URI: a scheme, ``:``, then one or more RFC 3986 characters with well-formed
  percent escapes; ``date`` is ``YYYY-MM-DD`` naming a real calendar date (years
  0001-9999); ``date-time`` is RFC 3339 ``date "T" time offset`` (``T``/``Z`` in either
  case, optional fraction, seconds up to 60 for a leap second, offset ``Z`` or
  ``+HH:MM``/``-HH:MM``).

Optional properties the user left out stay out: defaults are for the client to
pre-populate the form, not for the server to fill in.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypeGuard
from urllib.parse import urlsplit

from pydantic import ValidationError

from snodo.built import BuiltRequest
from snodo.context import Context
from snodo.errors import InvalidParams
from snodo.result import MISSING, Missing
from snodo_wire import adapters
from snodo_wire.models import ElicitResult

__all__ = [
    "FORMATS",
    "Accepted",
    "Cancelled",
    "Declined",
    "ElicitationResponse",
    "FormValue",
    "form",
    "response",
    "url",
]

METHOD = "elicitation/create"

FORMATS = frozenset({"email", "uri", "date", "date-time"})
"""The string formats the form subset allows (schema.json, StringSchema.format)."""

FormValue: TypeAlias = str | int | float | bool | list[str]
"""One checked form answer; schema.json ElicitResult.content values."""


@dataclass(frozen=True, slots=True)
class Accepted:
    """The user submitted the form, or consented to open the URL.

    For URL mode ``content`` is always empty: accepting means the user agreed to go to
    the URL, not that whatever happens there is done (client/elicitation.mdx). Check
    completion yourself, e.g. against state you keep for the flow.
    """

    content: Mapping[str, FormValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Declined:
    """The user explicitly refused."""


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The user dismissed the request without choosing (not a protocol cancellation)."""


ElicitationResponse: TypeAlias = Accepted | Declined | Cancelled


# --- building ------------------------------------------------------------------------


def form(message: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """A bare form-mode ``elicitation/create`` request.

    ``schema`` must be the spec's restricted flat subset (client/elicitation.mdx,
    "Requested Schema"); any other keyword, nesting or mistyped value raises
    ``ValueError``. The request carries ``"mode": "form"`` explicitly, as the spec's
    own examples do, though clients treat an absent mode as form.
    """
    _check_message(message)
    checked = _check_schema(schema)
    request = {
        "method": METHOD,
        "params": {"mode": "form", "message": message, "requestedSchema": checked.schema},
    }
    _check_wire(request)
    return BuiltRequest(request, checked)


def url(message: str, url: str) -> dict[str, Any]:
    """A bare URL-mode ``elicitation/create`` request: the user opens ``url`` themselves.

    Only absolute ``http``/``https`` URLs in ASCII (percent-encode paths, punycode
    hosts) are accepted. A URL carrying userinfo (``user:pass@host``) is refused: the
    server MUST NOT put credentials in it (client/elicitation.mdx, "Safe URL
    Handling"), and ``https://trusted@evil`` is a classic phishing shape. Keep any
    per-user secret out of the URL; bind the flow to the user server-side instead.
    """
    _check_message(message)
    _check_navigation_url(url)
    request = {"method": METHOD, "params": {"mode": "url", "message": message, "url": url}}
    _check_wire(request)
    return BuiltRequest(request)


def _check_message(message: object) -> None:
    if not isinstance(message, str) or not message:
        raise ValueError("message: must be a non-empty string")


_URL_CHARS = re.compile(r"[!-~]+")  # printable ASCII, no space


def _check_navigation_url(value: object) -> None:
    if not isinstance(value, str) or not _URL_CHARS.fullmatch(value):
        raise ValueError("url: must be a non-empty ASCII URL without whitespace")
    try:
        parts = urlsplit(value)
        _ = parts.port  # parses the port, raising ValueError when it is malformed
    except ValueError:
        raise ValueError("url: not a valid URL") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError("url: only absolute http and https URLs are allowed")
    if "@" in parts.netloc:
        raise ValueError("url: must not carry userinfo (credentials) before the host")
    if not parts.hostname:
        raise ValueError("url: must name a host")


def _check_wire(request: dict[str, Any]) -> None:
    """Cross-check with the generated model; the checks above are stricter, so a failure
    here is a bug in this module rather than in the caller's input."""
    try:
        adapters.input_request.validate_python(request, by_alias=True, by_name=False)
    except ValidationError as exc:  # pragma: no cover - guarded by the checks above
        raise ValueError(f"request does not match the schema: {exc}") from None


# --- the restricted schema -----------------------------------------------------------

_Kind = Literal["string", "number", "integer", "boolean", "single", "multi"]


@dataclass(frozen=True, slots=True)
class _Field:
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
class _Checked:
    schema: dict[str, Any]
    fields: dict[str, _Field]
    required: tuple[str, ...]


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


def _check_schema(schema: object) -> _Checked:
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
    fields: dict[str, _Field] = {}
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
    return _Checked(out, fields, tuple(required))


def _check_property(prop: object, path: str) -> tuple[dict[str, Any], _Field]:
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

    checked = _Field(
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
        except _RejectedValueError as exc:
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


class _RejectedValueError(ValueError):
    """A value does not satisfy its property; the reason never quotes the value."""


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _check_value(spec: _Field, value: object) -> FormValue:
    """``value`` if it satisfies ``spec`` (lists copied), else ``_RejectedValueError``."""
    if spec.kind == "boolean":
        if not isinstance(value, bool):
            raise _RejectedValueError("must be a boolean")
        return value
    if spec.kind in ("number", "integer"):
        if spec.kind == "integer" and not _is_int(value):
            raise _RejectedValueError("must be an integer")
        if not _is_number(value):
            raise _RejectedValueError("must be a finite number")
        if spec.minimum is not None and value < spec.minimum:
            raise _RejectedValueError("is below the minimum")
        if spec.maximum is not None and value > spec.maximum:
            raise _RejectedValueError("is above the maximum")
        return value
    if spec.kind == "multi":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise _RejectedValueError("must be a list of strings")
        if any(v not in spec.options for v in value):
            raise _RejectedValueError("contains a value that is not an option")
        if len(set(value)) != len(value):
            raise _RejectedValueError("repeats an option")
        if spec.min_items is not None and len(value) < spec.min_items:
            raise _RejectedValueError("has too few items")
        if spec.max_items is not None and len(value) > spec.max_items:
            raise _RejectedValueError("has too many items")
        return list(value)
    if not isinstance(value, str):
        raise _RejectedValueError("must be a string")
    if spec.kind == "single":
        if value not in spec.options:
            raise _RejectedValueError("is not one of the options")
        return value
    if spec.min_length is not None and len(value) < spec.min_length:
        raise _RejectedValueError("is shorter than minLength")
    if spec.max_length is not None and len(value) > spec.max_length:
        raise _RejectedValueError("is longer than maxLength")
    if spec.format is not None and not _FORMAT_CHECKS[spec.format](value):
        raise _RejectedValueError(f"is not a valid {spec.format}")
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


# --- reading answers -----------------------------------------------------------------


def response(ctx: Context, key: str, request: Mapping[str, Any]) -> ElicitationResponse | Missing:
    """The user's answer to ``request`` under ``key``, checked; ``MISSING`` if none came.

    On ``MISSING``, ask (again) with ``input_required``: the spec prefers re-requesting
    over an error (basic/patterns/mrtr.mdx, "Error Handling"). A malformed answer, or a
    form answer that does not satisfy the requested schema, raises ``InvalidParams``.
    ``request`` must be the one sent under ``key`` (rebuild it the same way); a request
    that was not built by :func:`form` or :func:`url` raises ``ValueError``.
    """
    checked = _requested(request)
    if key not in ctx.input_responses:
        return MISSING
    try:
        answer = ElicitResult.model_validate(ctx.input_responses[key], by_alias=True, by_name=False)
    except ValidationError:
        raise _invalid(key) from None
    if answer.action == "decline":
        return Declined()
    if answer.action == "cancel":
        return Cancelled()
    if checked is None:
        return Accepted({})  # URL mode: consent only; any content is ignored
    content = answer.content if isinstance(answer.content, dict) else {}
    try:
        return Accepted(_check_content(checked, content))
    except _RejectedValueError:
        raise _invalid(key) from None


def _invalid(key: str) -> InvalidParams:
    # One message naming only the server's own key: the answer may hold personal data.
    return InvalidParams(f"Invalid elicitation response for {key!r}")


def _requested(request: Mapping[str, Any]) -> _Checked | None:
    """The checked schema of a form request, None for a URL request."""
    if isinstance(request, BuiltRequest) and request["method"] == METHOD:
        return request.checked  # type: ignore[no-any-return]  # checked when built
    if not isinstance(request, Mapping) or request.get("method") != METHOD:
        raise ValueError(f"request: not an {METHOD} request")
    params = request.get("params")
    if not isinstance(params, Mapping):
        raise ValueError("request.params: must be an object")
    mode = params.get("mode", "form")
    if mode == "url":
        return None
    if mode != "form":
        raise ValueError("request.params.mode: must be 'form' or 'url'")
    return _check_schema(params.get("requestedSchema"))


def _check_content(checked: _Checked, content: object) -> dict[str, FormValue]:
    if not isinstance(content, Mapping):
        raise _RejectedValueError("content must be an object")
    for name in checked.required:
        if name not in content:
            raise _RejectedValueError("a required property is missing")
    return {
        name: _check_value(spec, content[name])
        for name, spec in checked.fields.items()
        if name in content
    }
