"""Join the overlay with the schema into the facts the table templates render.

Every overlay statement is checked here against the schema it describes; the first
one that no longer holds stops generation with a message that names it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from generator.overlay import CapabilityRule, MethodFact, Overlay, OverlayError

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
class ServerRequestRow:
    method: str
    request: str
    params: str | None
    result: str


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
    server_requests: tuple[ServerRequestRow, ...]
    capability_rules: tuple[CapabilityRule, ...]
    errors: tuple[ErrorRow, ...]
    unions: tuple[str, ...]
    models: tuple[str, ...]


def _ref_name(node: JSON) -> str | None:
    ref = node.get("$ref") if isinstance(node, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _branches(node: JSON) -> list[str]:
    return [name for b in node.get("anyOf") or node.get("oneOf") or [] if (name := _ref_name(b))]


def _properties(node: JSON) -> dict[str, JSON]:
    """A definition's properties, including those of its inline ``allOf`` parts (the
    extension schema writes a request as JSONRPCRequest and an object that narrows it)."""
    found = dict(node.get("properties", {}))
    for part in node.get("allOf", []):
        if isinstance(part, dict) and "$ref" not in part:
            found.update(_properties(part))
    return found


def _required(node: JSON) -> set[str]:
    """The members a definition requires, including those of its inline ``allOf`` parts."""
    found = set(node.get("required", []))
    for part in node.get("allOf", []):
        if isinstance(part, dict) and "$ref" not in part:
            found |= _required(part)
    return found


def _method_const(defs: dict[str, JSON], name: str) -> str:
    try:
        return str(_properties(defs[name])["method"]["const"])
    except KeyError as exc:
        raise OverlayError(f"{name} is not a definition with a fixed method") from exc


def _require(defs: dict[str, JSON], name: str, what: str) -> None:
    if name not in defs:
        raise OverlayError(f"{what} names {name}, which the schema does not define")


def _union(defs: dict[str, JSON], name: str, excluded: frozenset[str]) -> set[str]:
    if name not in defs:
        raise OverlayError(f"the schema no longer defines the {name} union")
    return set(_branches(defs[name])) - excluded


def _member(defs: dict[str, JSON], name: str, union: str) -> bool:
    """``name`` is a branch of ``union``, or an alias (``EmptyResult``) of one."""
    members = set(_branches(defs[union])) if union in defs else set()
    return name in members or _ref_name(defs[name]) in members


def _model(defs: dict[str, JSON], name: str) -> str:
    """The class a table row names: an alias definition (``EmptyResult`` is a bare
    ``$ref`` to ``Result``) compiles to a type alias, so the row names its target."""
    while (target := _ref_name(defs[name])) is not None:
        name = target
    return name


def _response(defs: dict[str, JSON], fact: MethodFact) -> tuple[str, list[str]]:
    """The response envelope of a method and the results it may carry.

    Revisions that name one response per method (``CallToolResultResponse``) state
    which results it allows; older ones have a single ``JSONRPCResultResponse`` whose
    result is any ``Result``, and the pairing is checked against ``ServerResult``.
    """
    response = f"{fact.result}Response"
    if response not in defs:
        _require(defs, "JSONRPCResultResponse", f"method {fact.method}")
        if not _member(defs, fact.result, "ServerResult"):
            raise OverlayError(f"{fact.result} is not in the ServerResult union")
        return "JSONRPCResultResponse", [fact.result]
    answers = _branches(defs[response]["properties"]["result"])
    answers = answers or [n for n in [_ref_name(defs[response]["properties"]["result"])] if n]
    if fact.result not in answers:
        raise OverlayError(f"{response} does not answer with {fact.result}")
    return response, answers


def _is_result(defs: dict[str, JSON], name: str) -> bool:
    """A definition built on Result, or a union of such definitions."""
    node = defs[name]
    if "anyOf" in node:
        return all(_is_result(defs, b) for b in _branches(node))
    return _ref_name((node.get("allOf") or [{}])[0]) == "Result"


def _extension_methods(defs: dict[str, JSON], overlay: Overlay) -> tuple[MethodRow, ...]:
    """An extension has no request or response unions: each method's request must fix
    its method name, and its result must be a definition that says it is a Result."""
    rows = []
    for fact in overlay.methods:
        _require(defs, fact.request, f"method {fact.method}")
        _require(defs, fact.result, f"method {fact.method}")
        if _method_const(defs, fact.request) != fact.method:
            raise OverlayError(f"{fact.request} no longer carries method {fact.method}")
        plain = overlay.extension is not None and not overlay.extension.results_extend_result
        if plain and defs[fact.result].get("type") != "object":
            raise OverlayError(f"{fact.result} is no longer an object")
        if not plain and not _is_result(defs, fact.result):
            raise OverlayError(f"{fact.result} is no longer a Result")
        if fact.input_required:
            raise OverlayError(f"extension method {fact.method} cannot answer input_required")
        params = _ref_name(_properties(defs[fact.request]).get("params"))
        if params is None:
            raise OverlayError(f"{fact.request}.params is not a named definition")
        rows.append(
            MethodRow(
                method=fact.method,
                request=fact.request,
                params=params,
                result=fact.result,
                response="JSONRPCResultResponse",
                input_required=False,
                cacheable=bool(overlay.cache_fields)
                and set(overlay.cache_fields) <= _required(defs[fact.result]),
            )
        )
    return tuple(rows)


def _check_input_required(
    defs: dict[str, JSON], overlay: Overlay, fact: MethodFact, response: str, answers: list[str]
) -> None:
    """A response may carry the method's result and, where the overlay says so, the
    input-required result the overlay names; anything else is a result the overlay does
    not account for (so ``input_required = false`` cannot hide a renamed definition)."""
    asks = overlay.input_required_result
    if asks is not None:
        _require(defs, asks, "[protocol] input_required_result")
    elif fact.input_required:
        raise OverlayError(
            f"overlay says {fact.method} input_required=true, but [protocol] names no "
            "input_required_result"
        )
    allowed = {fact.result} | ({asks} if fact.input_required and asks else set())
    if (asks in answers) != fact.input_required or set(answers) != allowed:
        raise OverlayError(
            f"overlay says {fact.method} input_required={fact.input_required} "
            f"(input_required_result {asks}), but {response} allows {answers}"
        )


def _check_cache_fields(defs: dict[str, JSON], overlay: Overlay) -> None:
    """A renamed cache field would make every method silently uncacheable."""
    for name in overlay.cache_fields:
        if not any(name in _properties(node) for node in defs.values() if isinstance(node, dict)):
            raise OverlayError(
                f"[protocol] cache_fields names {name}, which no definition of the schema has"
            )


def _methods(defs: dict[str, JSON], overlay: Overlay) -> tuple[MethodRow, ...]:
    if overlay.document is not None:
        return ()
    if overlay.extension is not None:
        return _extension_methods(defs, overlay)
    declared = {m.request for m in overlay.methods}
    in_schema = _union(defs, "ClientRequest", frozenset(overlay.excluded))
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
        response, answers = _response(defs, fact)
        _check_input_required(defs, overlay, fact, response, answers)
        required = set(defs[fact.result].get("required", []))
        rows.append(
            MethodRow(
                method=fact.method,
                request=fact.request,
                params=params,
                result=_model(defs, fact.result),
                response=response,
                input_required=fact.input_required,
                cacheable=bool(overlay.cache_fields) and set(overlay.cache_fields) <= required,
            )
        )
    return tuple(rows)


def _notification(defs: dict[str, JSON], name: str) -> NotificationRow:
    params = _properties(defs[name]).get("params")
    return NotificationRow(
        method=_method_const(defs, name),
        notification=name,
        params=_ref_name(params) if params else None,
    )


def _input_requests(defs: dict[str, JSON], overlay: Overlay) -> tuple[InputRequestRow, ...]:
    if not overlay.input_requests and "InputRequest" not in defs:
        return ()
    declared = {f.request for f in overlay.input_requests}
    in_schema = _union(defs, "InputRequest", frozenset(overlay.excluded))
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


def _server_requests(defs: dict[str, JSON], overlay: Overlay) -> tuple[ServerRequestRow, ...]:
    if not overlay.server_requests and "ServerRequest" not in defs:
        return ()
    declared = {f.request for f in overlay.server_requests}
    in_schema = _union(defs, "ServerRequest", frozenset(overlay.excluded))
    if declared != in_schema:
        raise OverlayError(
            "[server_requests] and the schema's ServerRequest union differ: "
            f"only in overlay {sorted(declared - in_schema)}, "
            f"only in schema {sorted(in_schema - declared)}"
        )
    rows = []
    for fact in overlay.server_requests:
        _require(defs, fact.request, f"server request {fact.method}")
        _require(defs, fact.result, f"server request {fact.method}")
        if _method_const(defs, fact.request) != fact.method:
            raise OverlayError(f"{fact.request} no longer carries method {fact.method}")
        if not _member(defs, fact.result, "ClientResult"):
            raise OverlayError(f"{fact.result} is not in the ClientResult union")
        params = defs[fact.request]["properties"].get("params")
        rows.append(
            ServerRequestRow(
                method=fact.method,
                request=fact.request,
                params=_ref_name(params) if params else None,
                result=_model(defs, fact.result),
            )
        )
    return tuple(rows)


def _check_excluded(defs: dict[str, JSON], overlay: Overlay) -> None:
    unions = ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification")
    listed = {b for u in unions if u in defs for b in _branches(defs[u])}
    for name in overlay.excluded:
        if name not in listed:
            raise OverlayError(
                f"[excluded] names {name}, which is in no request or notification union"
            )


def _check_rules(defs: dict[str, JSON], overlay: Overlay) -> None:
    methods = {f.method for f in overlay.input_requests} | {
        f.method for f in overlay.server_requests
    }
    for rule in overlay.capability_rules:
        if rule.method not in methods:
            raise OverlayError(f"capability rule for unknown request {rule.method}")
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


def _notifications(defs: dict[str, JSON], union: str, overlay: Overlay) -> list[NotificationRow]:
    if overlay.extension is not None and union == "ServerNotification":
        for name in overlay.extension.notifications:
            _require(defs, name, "[extension] notifications")
        return [_notification(defs, n) for n in overlay.extension.notifications]
    if union not in defs:
        return []
    names = _branches(defs[union]) or [union]
    return [_notification(defs, n) for n in names if n not in overlay.excluded]


def _check_document(defs: dict[str, JSON], overlay: Overlay, schema_id: str) -> None:
    """The root the overlay names is a definition, and the ``$schema`` value it says a
    document carries is one the schema admits."""
    document = overlay.document
    if document is None:
        return
    _require(defs, document.root, "[document] root")
    if not document.schema_uri:
        return
    member = defs[document.root].get("properties", {}).get("$schema", {})
    pattern, example = member.get("pattern"), member.get("example")
    if pattern is not None:
        if re.fullmatch(pattern, document.schema_uri) is None:
            raise OverlayError(
                f"[document] schema_uri {document.schema_uri} does not match {pattern}"
            )
    elif document.schema_uri not in (schema_id, example):
        raise OverlayError(
            f"[document] schema_uri {document.schema_uri} is neither the schema's $id "
            f"({schema_id}) nor its $schema example ({example})"
        )


def collect(prepared: JSON, overlay: Overlay, schema_id: str = "") -> Facts:
    defs: dict[str, JSON] = prepared["$defs"]
    _check_document(defs, overlay, schema_id)
    _check_meta_keys(prepared, overlay)
    _check_excluded(defs, overlay)
    _check_rules(defs, overlay)
    _check_cache_fields(defs, overlay)
    return Facts(
        methods=_methods(defs, overlay),
        server_notifications=tuple(
            sorted(_notifications(defs, "ServerNotification", overlay), key=lambda r: r.method)
        ),
        client_notifications=tuple(_notifications(defs, "ClientNotification", overlay)),
        input_requests=_input_requests(defs, overlay),
        server_requests=_server_requests(defs, overlay),
        capability_rules=overlay.capability_rules,
        errors=_errors(defs, overlay),
        unions=tuple(sorted(n for n, d in defs.items() if "anyOf" in d or "oneOf" in d)),
        models=tuple(sorted(defs)),
    )
