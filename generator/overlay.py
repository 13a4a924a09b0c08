"""Read a revision's ``overlay.toml``: the protocol facts that schema.json does not state.

One overlay per pinned revision (``schema/<revision>/overlay.toml``). Every table but
``[package]`` and ``[protocol]`` is optional, so an overlay states only what its
revision has: input requests (embedded in results) or server requests (sent in a
session), patches, meta keys. A pinned document schema (``[document]``: a Server Card,
a registry entry, a bundle manifest) describes one JSON document rather than protocol
messages: it has no ``[protocol]`` and no methods.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class OverlayError(Exception):
    """The overlay no longer fits the schema it amends."""


@dataclass(frozen=True, slots=True)
class MethodFact:
    method: str
    request: str
    result: str
    input_required: bool = False


@dataclass(frozen=True, slots=True)
class InputRequestFact:
    method: str
    request: str
    result: str
    deprecated: bool


@dataclass(frozen=True, slots=True)
class ServerRequestFact:
    """A request the server sends to the client within a session, and its answer."""

    method: str
    request: str
    result: str


@dataclass(frozen=True, slots=True)
class CapabilityRule:
    method: str
    requires: str
    always: bool
    present: tuple[str, ...]
    param: str | None
    values: tuple[str, ...]
    not_values: tuple[str, ...]
    absent_matches: bool
    empty_parent_satisfies: bool


@dataclass(frozen=True, slots=True)
class ErrorFact:
    name: str
    code: int
    definition: str


@dataclass(frozen=True, slots=True)
class Patch:
    pointer: str
    expect: Any
    value: Any
    reason: str


@dataclass(frozen=True, slots=True)
class ReplaceRef:
    """Every ``{"$ref": ref}`` of the schema becomes ``value``: for a reference to a
    definition the published file left out."""

    ref: str
    value: Any
    reason: str


@dataclass(frozen=True, slots=True)
class ExtensionFact:
    """An extension schema compiled on top of a core revision it repeats definitions of."""

    id: str
    """The extension identifier, the key under ``capabilities.extensions``."""
    base: str
    """The core revision (a folder under ``schema/``) whose definitions it repeats."""
    notifications: tuple[str, ...]
    """The notification definitions it adds (it has no notification union)."""
    results_extend_result: bool = True
    """Whether its results are built on the core's ``Result`` (false: plain objects,
    as in a protocol of its own between host and app)."""
    redefines: dict[str, str] = field(default_factory=dict)
    """Base definitions its schema changes on purpose (``[extension.redefines]``: name to
    reason); every other repeated definition must equal the base's, descriptions aside."""


@dataclass(frozen=True, slots=True)
class DocumentFact:
    """A schema of one JSON document, published beside the protocol (``[document]``)."""

    root: str
    """The definition the whole document is (lifted into one when the schema's root is
    an inline object)."""
    media_type: str = ""
    """The media type the document is served with, where its specification names one."""
    schema_uri: str = ""
    """What a document names in its ``$schema`` member: checked against the schema (its
    ``$id``, or the pattern or example of the root's ``$schema`` property)."""


ERAS = ("modern", "legacy")
"""A core revision's era: per-request ``_meta`` (modern) or an ``initialize`` session."""


@dataclass(frozen=True, slots=True)
class Overlay:
    package: str
    """The Python package this revision compiles into."""
    era: str | None
    """``modern`` or ``legacy`` for a core revision; ``None`` for an extension."""
    served: bool
    """Whether the runtime offers this revision (false: a draft, generated only)."""
    latest_version: str
    supported_versions: tuple[str, ...]
    batch_versions: tuple[str, ...]
    """Supported versions that have JSON-RPC batches (the schema cannot say)."""
    meta_keys: dict[str, str]
    constants: dict[str, str]
    """Further named strings the specification fixes (``[protocol.constants]``)."""
    methods: tuple[MethodFact, ...]
    input_requests: tuple[InputRequestFact, ...]
    server_requests: tuple[ServerRequestFact, ...]
    excluded: tuple[str, ...]
    """Definitions kept as models but left out of the method and notification tables."""
    capability_rules: tuple[CapabilityRule, ...]
    errors: tuple[ErrorFact, ...]
    discriminators: dict[str, str]
    inline_names: dict[str, str]
    patches: tuple[Patch, ...]
    replace_refs: tuple[ReplaceRef, ...]
    cache_fields: tuple[str, ...] = ()
    """The result fields that make a method cacheable when its result requires them all
    (``[protocol] cache_fields``); each must still be a field of some result."""
    input_required_result: str | None = None
    """The result definition that asks the client for input (``[protocol]``): the name
    the generator looks for in response unions, so a rename is an overlay edit."""
    distribute: dict[str, list[str]] = field(default_factory=dict)
    split_required: dict[str, list[str]] = field(default_factory=dict)
    """``allOf: [A, {..., anyOf: [{required: [x]}, {required: [y]}]}]`` definitions made
    one named branch per alternative (extensions and documents)."""
    """Extension only: ``allOf: [A, anyOf: [...]]`` definitions split into named branches."""
    extension: ExtensionFact | None = None
    """Set for an extension schema: methods are checked one by one, not against unions."""
    asked: tuple[str, ...] = ()
    """``[draft] asked``: questions ``add-revision`` left to answer; while any is open
    the revision is pending: neither generated nor listed in the catalog."""
    unfilled: tuple[str, ...] = ()
    """``[draft] unfilled``: required fields no runtime code fills, which keep the
    revision a draft (not served)."""
    document: DocumentFact | None = None
    """Set for a document schema: no methods, no protocol versions."""


def _rule(raw: dict[str, Any]) -> CapabilityRule:
    rule = CapabilityRule(
        method=raw["method"],
        requires=raw["requires"],
        always=bool(raw.get("always", False)),
        present=tuple(raw.get("present", ())),
        param=raw.get("param"),
        values=tuple(raw.get("values", ())),
        not_values=tuple(raw.get("not_values", ())),
        absent_matches=bool(raw.get("absent_matches", False)),
        empty_parent_satisfies=bool(raw.get("empty_parent_satisfies", False)),
    )
    kinds = [rule.always, bool(rule.present), rule.param is not None]
    if sum(kinds) != 1:
        raise OverlayError(f"capability rule {raw} needs exactly one of always/present/param")
    if rule.param is not None and bool(rule.values) == bool(rule.not_values):
        raise OverlayError(f"capability rule {raw} needs exactly one of values/not_values")
    return rule


def _batch_versions(protocol: dict[str, Any]) -> tuple[str, ...]:
    batch = tuple(protocol.get("batch_versions", ()))
    unknown = sorted(set(batch) - set(protocol["supported_versions"]))
    if unknown:
        raise OverlayError(f"batch_versions {unknown} are not in supported_versions")
    return batch


def load_overlay(path: Path) -> Overlay:
    try:
        return parse_overlay(path.read_text(encoding="utf-8"))
    except OverlayError as exc:
        raise OverlayError(f"{path}: {exc}") from exc


def parse_overlay(text: str) -> Overlay:
    """An overlay from its TOML text."""
    try:
        return _overlay(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise OverlayError(f"not TOML: {exc}") from exc
    except (KeyError, TypeError) as exc:
        raise OverlayError(f"malformed entry ({exc!r})") from exc


def _era_and_served(raw: dict[str, Any]) -> tuple[str | None, bool]:
    """Contract with the runtime's registry: a core revision states its era and whether
    it is served; an extension states neither (it is never served on its own)."""
    package = raw["package"]
    if "document" in raw:
        stray = sorted({"era", "served"} & set(package)) + sorted(
            {"protocol", "methods", "extension"} & set(raw)
        )
        if stray:
            raise OverlayError(f"{stray}: a document schema has no era, methods or protocol")
        return None, False
    if "extension" in raw:
        stray = sorted({"era", "served"} & set(package))
        if stray:
            raise OverlayError(f"[package] {stray}: an extension has no era and is not served")
        return None, False
    era, served = package.get("era"), package.get("served")
    if era not in ERAS:
        raise OverlayError(f"[package] era must be one of {list(ERAS)}, not {era!r}")
    if not isinstance(served, bool):
        raise OverlayError(f"[package] served must be true or false, not {served!r}")
    return era, served


def _overlay(raw: dict[str, Any]) -> Overlay:
    era, served = _era_and_served(raw)
    document = _document(raw["document"]) if "document" in raw else None
    protocol: dict[str, Any] = raw["protocol"] if document is None else {"supported_versions": []}
    constants: dict[str, Any] = protocol if document is None else raw["document"]
    return Overlay(
        package=raw["package"]["name"],
        era=era,
        served=served,
        latest_version="" if document is not None else protocol["latest_version"],
        supported_versions=tuple(protocol["supported_versions"]),
        batch_versions=_batch_versions(protocol),
        meta_keys=dict(sorted(protocol.get("meta_keys", {}).items())),
        constants=dict(sorted(constants.get("constants", {}).items())),
        methods=tuple(
            MethodFact(method=name, **fields)
            for name, fields in sorted(raw.get("methods", {}).items())
        ),
        input_requests=tuple(
            InputRequestFact(method=name, **fields)
            for name, fields in sorted(raw.get("input_requests", {}).items())
        ),
        server_requests=tuple(
            ServerRequestFact(method=name, **fields)
            for name, fields in sorted(raw.get("server_requests", {}).items())
        ),
        excluded=tuple(sorted(raw.get("excluded", {}).get("definitions", ()))),
        capability_rules=tuple(_rule(item) for item in raw.get("capability_rules", ())),
        errors=tuple(
            ErrorFact(name=name, code=int(fields["code"]), definition=fields["definition"])
            for name, fields in raw.get("errors", {}).items()
        ),
        discriminators=dict(raw.get("discriminators", {})),
        inline_names=dict(raw.get("inline_names", {})),
        patches=tuple(Patch(**item) for item in raw.get("patches", ())),
        replace_refs=tuple(ReplaceRef(**item) for item in raw.get("replace_refs", ())),
        input_required_result=protocol.get("input_required_result"),
        cache_fields=tuple(protocol.get("cache_fields", ())),
        distribute={k: list(v) for k, v in raw.get("distribute", {}).items()},
        split_required={k: list(v) for k, v in raw.get("split_required", {}).items()},
        extension=_extension(raw["extension"]) if "extension" in raw else None,
        asked=tuple(str(q) for q in raw.get("draft", {}).get("asked", ())),
        unfilled=tuple(str(f) for f in raw.get("draft", {}).get("unfilled", ())),
        document=document,
    )


def _document(raw: dict[str, Any]) -> DocumentFact:
    return DocumentFact(
        root=str(raw["root"]),
        media_type=str(raw.get("media_type", "")),
        schema_uri=str(raw.get("schema_uri", "")),
    )


def _extension(raw: dict[str, Any]) -> ExtensionFact:
    return ExtensionFact(
        id=str(raw["id"]),
        base=str(raw["base"]),
        notifications=tuple(sorted(raw.get("notifications", ()))),
        results_extend_result=bool(raw.get("results_extend_result", True)),
        redefines={str(k): str(v) for k, v in sorted(raw.get("redefines", {}).items())},
    )
