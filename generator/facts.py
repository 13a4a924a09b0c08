"""Join the overlay with the schema into the facts the table templates render.

Every overlay statement is checked here against the schema it describes; the first
one that no longer holds stops generation with a message that names it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from generator.overlay import CapabilityRule, Overlay, OverlayError

JSON = Any


@dataclass(frozen=True, slots=True)
class MethodRow:
    method: str
    request: str
    params: str
    result: str
    response: str
    input_required: bool
    cacheable: bool


@dataclass(frozen=True, slots=True)
class NotificationRow:
    method: str
    notification: str
    params: str | None


@dataclass(frozen=True, slots=True)
class InputRequestRow:
    method: str
    request: str
    params: str | None
    result: str
    deprecated: bool


@dataclass(frozen=True, slots=True)
class ErrorRow:
    name: str
    code: int
    definition: str


@dataclass(frozen=True, slots=True)
class Facts:
    methods: tuple[MethodRow, ...]
    server_notifications: tuple[NotificationRow, ...]
    client_notifications: tuple[NotificationRow, ...]
    input_requests: tuple[InputRequestRow, ...]
    capability_rules: tuple[CapabilityRule, ...]
    errors: tuple[ErrorRow, ...]
    unions: tuple[str, ...]
    models: tuple[str, ...]


def _ref_name(node: JSON) -> str | None:
    ref = node.get("$ref") if isinstance(node, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _branches(node: JSON) -> list[str]:
    return [name for b in node.get("anyOf") or node.get("oneOf") or [] if (name := _ref_name(b))]


def _method_const(defs: dict[str, JSON], name: str) -> str:
    try:
        return str(defs[name]["properties"]["method"]["const"])
    except KeyError as exc:
        raise OverlayError(f"{name} is not a definition with a fixed method") from exc


def _require(defs: dict[str, JSON], name: str, what: str) -> None:
    if name not in defs:
        raise OverlayError(f"{what} names {name}, which the schema does not define")


def _methods(defs: dict[str, JSON], overlay: Overlay) -> tuple[MethodRow, ...]:
    declared = {m.request for m in overlay.methods}
    in_schema = set(_branches(defs["ClientRequest"]))
    if declared != in_schema:
        raise OverlayError(
            "[methods] and the schema's ClientRequest union differ: "
            f"only in overlay {sorted(declared - in_schema)}, "
            f"only in schema {sorted(in_schema - declared)}"
        )
    rows = []
    for fact in overlay.methods:
        _require(defs, fact.request, f"method {fact.method}")
        _require(defs, fact.result, f"method {fact.method}")
        if _method_const(defs, fact.request) != fact.method:
            raise OverlayError(f"{fact.request} no longer carries method {fact.method}")
        params = _ref_name(defs[fact.request]["properties"]["params"])
        if params is None:
            raise OverlayError(f"{fact.request}.params is not a named definition")
        response = f"{fact.result}Response"
        _require(defs, response, f"method {fact.method}")
        answers = _branches(defs[response]["properties"]["result"])
        answers = answers or [n for n in [_ref_name(defs[response]["properties"]["result"])] if n]
        if fact.result not in answers:
            raise OverlayError(f"{response} does not answer with {fact.result}")
        if ("InputRequiredResult" in answers) != fact.input_required:
            raise OverlayError(
                f"overlay says {fact.method} input_required={fact.input_required}, "
                f"but {response} allows {answers}"
            )
        required = set(defs[fact.result].get("required", []))
        rows.append(
            MethodRow(
                method=fact.method,
                request=fact.request,
                params=params,
                result=fact.result,
                response=response,
                input_required=fact.input_required,
                cacheable={"ttlMs", "cacheScope"} <= required,
            )
        )
    return tuple(rows)


def _notification(defs: dict[str, JSON], name: str) -> NotificationRow:
    params = defs[name]["properties"].get("params")
    return NotificationRow(
        method=_method_const(defs, name),
        notification=name,
        params=_ref_name(params) if params else None,
    )


def _input_requests(defs: dict[str, JSON], overlay: Overlay) -> tuple[InputRequestRow, ...]:
    declared = {f.request for f in overlay.input_requests}
    in_schema = set(_branches(defs["InputRequest"]))
    if declared != in_schema:
        raise OverlayError(
            f"[input_requests] {sorted(declared)} and the InputRequest union "
            f"{sorted(in_schema)} differ"
        )
    responses = set(_branches(defs["InputResponse"]))
    rows = []
    for fact in overlay.input_requests:
        _require(defs, fact.result, f"input request {fact.method}")
        if _method_const(defs, fact.request) != fact.method:
            raise OverlayError(f"{fact.request} no longer carries method {fact.method}")
        if fact.result not in responses:
            raise OverlayError(f"{fact.result} is not in the InputResponse union")
        params = defs[fact.request]["properties"].get("params")
        rows.append(
            InputRequestRow(
                method=fact.method,
                request=fact.request,
                params=_ref_name(params) if params else None,
                result=fact.result,
                deprecated=fact.deprecated,
            )
        )
    return tuple(rows)


def _check_rules(defs: dict[str, JSON], overlay: Overlay) -> None:
    methods = {f.method for f in overlay.input_requests}
    for rule in overlay.capability_rules:
        if rule.method not in methods:
            raise OverlayError(f"capability rule for unknown input request {rule.method}")
        node: JSON = defs["ClientCapabilities"]
        for part in rule.requires.split("."):
            props = node.get("properties", {})
            if part not in props:
                raise OverlayError(f"ClientCapabilities has no {rule.requires}")
            node = props[part]
            while (name := _ref_name(node)) is not None:
                node = defs[name]


def _error_code_in_schema(defs: dict[str, JSON], name: str) -> int | None:
    node = defs[name]
    code = node.get("properties", {}).get("code", {})
    if "const" in code:
        return int(code["const"])
    error = node.get("properties", {}).get("error")
    if error is not None:
        while (ref := _ref_name(error)) is not None:
            error = defs[ref]
        for part in error.get("allOf", []):
            const = part.get("properties", {}).get("code", {}).get("const")
            if const is not None:
                return int(const)
    return None


def _errors(defs: dict[str, JSON], overlay: Overlay) -> tuple[ErrorRow, ...]:
    rows = []
    for fact in overlay.errors:
        _require(defs, fact.definition, f"error {fact.name}")
        pinned = _error_code_in_schema(defs, fact.definition)
        if pinned is not None and pinned != fact.code:
            raise OverlayError(f"{fact.definition} pins code {pinned}, overlay says {fact.code}")
        rows.append(ErrorRow(name=fact.name, code=fact.code, definition=fact.definition))
    return tuple(sorted(rows, key=lambda r: -r.code))


def _check_meta_keys(prepared: JSON, overlay: Overlay) -> None:
    text = json.dumps(prepared)
    for name, key in overlay.meta_keys.items():
        if key not in text:
            raise OverlayError(f"_meta key {name} = {key!r} no longer appears in the schema")


def collect(prepared: JSON, overlay: Overlay) -> Facts:
    defs: dict[str, JSON] = prepared["$defs"]
    _check_meta_keys(prepared, overlay)
    _check_rules(defs, overlay)
    client_note = defs["ClientNotification"]
    client_notes = _branches(client_note) or ["ClientNotification"]
    return Facts(
        methods=_methods(defs, overlay),
        server_notifications=tuple(
            sorted(
                (_notification(defs, n) for n in _branches(defs["ServerNotification"])),
                key=lambda r: r.method,
            )
        ),
        client_notifications=tuple(_notification(defs, n) for n in client_notes),
        input_requests=_input_requests(defs, overlay),
        capability_rules=overlay.capability_rules,
        errors=_errors(defs, overlay),
        unions=tuple(sorted(n for n, d in defs.items() if "anyOf" in d or "oneOf" in d)),
        models=tuple(sorted(defs)),
    )
