"""The generator on a small schema written here: expected models and tables out, and
each overlay failure named.

The schema is a made-up protocol revision "2030-01-01" with two client methods (one
answered by an alias result), a server-to-client request gated by a capability, a
notification, an excluded method, an inline object, a tagged union, a patch and a
reserved ``_meta`` key: one of everything the overlay can state.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from generator.facts import collect
from generator.overlay import Overlay, OverlayError, load_overlay
from generator.prepass import prepare
from generator.render import render_package
from generator.revisions import check_pairing, load_revision
from generator.source import Pin

PACKAGE = "wire_example"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def request(method: str, params: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "jsonrpc": {"const": "2.0", "type": "string"},
            "id": {"type": "integer"},
            "method": {"const": method, "type": "string"},
            "params": ref(params),
        },
        "required": ["jsonrpc", "id", "method"],
    }


SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "RequestParams": {
            "type": "object",
            "properties": {
                "_meta": {"type": "object", "description": "May carry io.example/trace."}
            },
        },
        "EchoRequestParams": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "ratio": {"type": "number"},
                "options": {"type": "object", "properties": {"loud": {"type": "boolean"}}},
            },
            "required": ["text"],
        },
        "EchoRequest": request("echo", "EchoRequestParams"),
        "PingRequest": request("ping", "RequestParams"),
        "ObsoleteRequest": request("obsolete", "RequestParams"),
        "ClientRequest": {
            "anyOf": [ref("EchoRequest"), ref("PingRequest"), ref("ObsoleteRequest")]
        },
        "Result": {"type": "object", "properties": {"_meta": {"type": "object"}}},
        "EmptyResult": ref("Result"),
        "EchoResult": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "tag": ref("Tag")},
            "required": ["text"],
        },
        "ServerResult": {"anyOf": [ref("Result"), ref("EchoResult")]},
        "JSONRPCResultResponse": {
            "type": "object",
            "properties": {
                "jsonrpc": {"const": "2.0", "type": "string"},
                "id": {"type": "integer"},
                "result": ref("Result"),
            },
            "required": ["jsonrpc", "id", "result"],
        },
        "AskRequestParams": {
            "type": "object",
            "properties": {
                "question": {"type": "string"},
                "mode": {"type": "string", "enum": ["form", "url"]},
            },
            "required": ["question"],
        },
        "AskRequest": request("ask", "AskRequestParams"),
        "ServerRequest": {"anyOf": [ref("AskRequest"), ref("PingRequest")]},
        "AnswerResult": {"type": "object", "properties": {"answer": {"type": "string"}}},
        "ClientResult": {"anyOf": [ref("Result"), ref("AnswerResult")]},
        "DoneNotification": {
            "type": "object",
            "properties": {
                "jsonrpc": {"const": "2.0", "type": "string"},
                "method": {"const": "notifications/done", "type": "string"},
            },
            "required": ["jsonrpc", "method"],
        },
        "ServerNotification": {"anyOf": [ref("DoneNotification")]},
        "ClientCapabilities": {
            "type": "object",
            "properties": {"ask": {"type": "object", "properties": {"form": {"type": "object"}}}},
        },
        "Error": {
            "type": "object",
            "properties": {"code": {"type": "integer"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        },
        "TeapotError": {
            "type": "object",
            "properties": {"code": {"const": -32099, "type": "integer"}},
            "required": ["code"],
        },
        "Tag": {"type": "object", "properties": {"value": {"type": ["string", "integer"]}}},
    },
}

OVERLAY = """
[package]
name = "wire_example"
era = "modern"
served = true

[protocol]
latest_version = "2030-01-01"
supported_versions = ["2030-01-01", "2029-01-01"]

[protocol.meta_keys]
trace = "io.example/trace"

[excluded]
definitions = ["ObsoleteRequest"]

[methods.echo]
request = "EchoRequest"
result = "EchoResult"

[methods.ping]
request = "PingRequest"
result = "EmptyResult"

[server_requests.ask]
request = "AskRequest"
result = "AnswerResult"

[server_requests.ping]
request = "PingRequest"
result = "EmptyResult"

[[capability_rules]]
method = "ask"
requires = "ask.form"
param = "mode"
values = ["form"]
absent_matches = true

[errors]
PARSE_ERROR = { code = -32700, definition = "Error" }
TEAPOT = { code = -32099, definition = "TeapotError" }

[discriminators]
ClientRequest = "method"
ServerRequest = "method"

[inline_names]
"ClientCapabilities/properties/ask" = "AskCapability"
"EchoRequestParams/properties/options" = "EchoOptions"

[[patches]]
pointer = "/$defs/Tag/properties/value/type"
expect = ["string", "integer"]
value = ["string", "integer", "null"]
reason = "a tag may be cleared"
"""

PIN = Pin(
    revision="2030-01-01",
    repository="example/spec",
    path="schema.json",
    commit="0" * 40,
    sha256="ab" * 32,
    url="https://example.invalid/schema.json",
)


@pytest.fixture(scope="module")
def overlay(tmp_path_factory: pytest.TempPathFactory) -> Overlay:
    path = tmp_path_factory.mktemp("overlay") / "overlay.toml"
    path.write_text(OVERLAY, encoding="utf-8")
    return load_overlay(path)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory, overlay: Overlay) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("generated")
    render_package(copy.deepcopy(SCHEMA), root / PACKAGE, PIN, overlay)
    sys.path.insert(0, str(root))
    try:
        yield root / PACKAGE
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def module(package: Path, name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


# -- what comes out ------------------------------------------------------------------


def test_the_package_holds_one_file_per_kind(package: Path) -> None:
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py",
        "adapters.py",
        "errors.py",
        "models.py",
        "protocol.py",
        "py.typed",
        "tables.py",
    ]
    header = (package / "tables.py").read_text().splitlines()[:3]
    assert header == [
        "# Generated by snodo's generator (python -m generator generate) from the MCP schema,",
        f"# revision 2030-01-01, sha256 {'ab' * 32}.",
        "# Do not edit: change schema/2030-01-01/overlay.toml or templates/ and regenerate.",
    ]


def test_protocol_constants(package: Path) -> None:
    protocol = module(package, "protocol")
    assert protocol.REVISION == "2030-01-01"
    assert protocol.LATEST_PROTOCOL_VERSION == "2030-01-01"
    assert protocol.SUPPORTED_PROTOCOL_VERSIONS == ("2030-01-01", "2029-01-01")
    assert protocol.META_TRACE == "io.example/trace"
    assert PIN.url == protocol.SCHEMA_URL


def test_method_table_rows(package: Path) -> None:
    text = (package / "tables.py").read_text()
    expected = """
        "ping": MethodSpec(
            method="ping",
            request=models.PingRequest,
            params=models.RequestParams,
            result=models.Result,
            response=models.JSONRPCResultResponse,
            input_required=False,
            cacheable=False,
        ),
    """
    assert textwrap.indent(textwrap.dedent(expected).strip("\n"), "        ") in text
    tables, models = module(package, "tables"), module(package, "models")
    assert list(tables.METHODS) == ["echo", "ping"]
    echo = tables.METHODS["echo"]
    assert (echo.request, echo.params, echo.result) == (
        models.EchoRequest,
        models.EchoRequestParams,
        models.EchoResult,
    )
    assert frozenset() == tables.INPUT_REQUIRED_METHODS
    assert not hasattr(tables, "INPUT_REQUESTS")


def test_server_requests_notifications_rules_and_errors(package: Path) -> None:
    tables, models = module(package, "tables"), module(package, "models")
    assert list(tables.SERVER_REQUESTS) == ["ask", "ping"]
    ask = tables.SERVER_REQUESTS["ask"]
    assert (ask.request, ask.params, ask.result) == (
        models.AskRequest,
        models.AskRequestParams,
        models.AnswerResult,
    )
    assert tables.SERVER_REQUESTS["ping"].result is models.Result
    done = tables.SERVER_NOTIFICATIONS["notifications/done"]
    assert (done.notification, done.params) == (models.DoneNotification, None)
    assert dict(tables.CLIENT_NOTIFICATIONS) == {}
    assert (
        tables.CapabilityRule(
            method="ask",
            requires=("ask", "form"),
            param="mode",
            values=("form",),
            absent_matches=True,
        ),
    ) == tables.CAPABILITY_RULES
    errors = module(package, "errors")
    assert [(e.name, int(e)) for e in errors.ErrorCode] == [
        ("TEAPOT", -32099),
        ("PARSE_ERROR", -32700),
    ]
    assert errors.ERROR_DEFINITIONS[errors.ErrorCode.TEAPOT] is models.TeapotError


def test_excluded_definitions_stay_as_models(package: Path) -> None:
    tables, models = module(package, "tables"), module(package, "models")
    assert "obsolete" not in tables.METHODS
    message = {"jsonrpc": "2.0", "id": 1, "method": "obsolete", "params": {}}
    assert models.ObsoleteRequest.model_validate(message).method == "obsolete"


def test_models_names_numbers_patches_and_tags(package: Path) -> None:
    models, adapters = module(package, "models"), module(package, "adapters")
    assert issubclass(models.EchoOptions, BaseModel)
    assert issubclass(models.AskCapability, BaseModel)
    assert [n for n in vars(models) if n[-1].isdigit()] == []
    params = models.EchoRequestParams.model_validate({"text": "a", "ratio": 2})
    assert params.model_dump_json() == '{"ratio":2,"text":"a"}'
    assert models.EchoRequestParams.model_validate({"text": "a", "ratio": 0.5}).ratio == 0.5
    assert models.Tag.model_validate({"value": None}).model_dump() == {"value": None}
    with pytest.raises(ValidationError) as info:
        adapters.client_request.validate_python(
            {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}}
        )
    assert "echo" in str(info.value) and "ping" not in str(info.value)
    with pytest.raises(ValidationError):
        models.EchoRequestParams.model_validate({"text": 1})


# -- overlay failures, each named ----------------------------------------------------


def schema() -> dict[str, Any]:
    return copy.deepcopy(SCHEMA)


def facts_of(raw: dict[str, Any], overlay: Overlay) -> None:
    collect(prepare(raw, overlay), overlay)


def test_the_synthetic_inputs_are_consistent(overlay: Overlay) -> None:
    facts_of(schema(), overlay)
    check_pairing(PIN, overlay)


def test_a_patch_whose_upstream_value_moved(overlay: Overlay) -> None:
    moved = schema()
    moved["$defs"]["Tag"]["properties"]["value"]["type"] = "string"
    with pytest.raises(OverlayError) as info:
        prepare(moved, overlay)
    assert str(info.value) == (
        "patch at /$defs/Tag/properties/value/type expects ['string', 'integer'] but the "
        "schema now has 'string'; upstream changed it: review and update or drop the patch "
        "in the overlay"
    )


def test_a_patch_whose_target_is_gone(overlay: Overlay) -> None:
    gone = schema()
    del gone["$defs"]["Tag"]["properties"]["value"]
    with pytest.raises(OverlayError, match=r"^patch target /\$defs/Tag/properties/value/type"):
        prepare(gone, overlay)


def test_an_unnamed_inline_object(overlay: Overlay) -> None:
    grown = schema()
    grown["$defs"]["EchoResult"]["properties"]["extra"] = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
    }
    with pytest.raises(OverlayError) as info:
        prepare(grown, overlay)
    assert str(info.value) == (
        "inline schemas with no name (add them to [inline_names] in the overlay):\n"
        "  EchoResult/properties/extra"
    )


def test_an_unnamed_copy_of_a_definition_refers_to_it(overlay: Overlay) -> None:
    """Naming one occurrence of a shape names its copies: an unnamed inline object that
    repeats a definition (its own description aside) becomes a reference to it."""
    grown = schema()
    tag = {k: v for k, v in grown["$defs"]["Tag"].items() if k != "$schema"}
    grown["$defs"]["EchoResult"]["properties"]["tag"] = {**tag, "description": "Its tag."}
    prepared = prepare(grown, overlay)
    assert prepared["$defs"]["EchoResult"]["properties"]["tag"] == {"$ref": "#/$defs/Tag"}


def test_a_property_that_may_never_be_present_gets_no_field(overlay: Overlay) -> None:
    grown = schema()
    grown["$defs"]["Tag"]["properties"]["old"] = {"not": {}}
    grown["$defs"]["Tag"]["additionalProperties"] = False
    assert "old" not in prepare(grown, overlay)["$defs"]["Tag"]["properties"]


def test_an_inline_name_that_matches_nothing(overlay: Overlay) -> None:
    stale = dataclasses.replace(
        overlay, inline_names={**overlay.inline_names, "Tag/properties/gone": "Gone"}
    )
    with pytest.raises(OverlayError, match=r"\[inline_names\] entries match nothing"):
        prepare(schema(), stale)


def test_a_method_missing_from_the_overlay(overlay: Overlay) -> None:
    fewer = dataclasses.replace(overlay, methods=overlay.methods[1:])
    with pytest.raises(OverlayError) as info:
        facts_of(schema(), fewer)
    assert str(info.value) == (
        "[methods] and the schema's ClientRequest union differ: "
        "only in overlay [], only in schema ['EchoRequest']"
    )


def test_a_server_request_missing_from_the_overlay(overlay: Overlay) -> None:
    fewer = dataclasses.replace(overlay, server_requests=overlay.server_requests[:1])
    with pytest.raises(OverlayError, match=r"only in schema \['PingRequest'\]"):
        facts_of(schema(), fewer)


def test_a_method_that_moved(overlay: Overlay) -> None:
    moved = schema()
    moved["$defs"]["EchoRequest"]["properties"]["method"]["const"] = "echo/v2"
    with pytest.raises(OverlayError, match=r"^EchoRequest no longer carries method echo$"):
        facts_of(moved, overlay)


def test_a_result_outside_the_result_union(overlay: Overlay) -> None:
    narrowed = schema()
    narrowed["$defs"]["ServerResult"]["anyOf"] = [ref("Result")]
    with pytest.raises(OverlayError, match=r"^EchoResult is not in the ServerResult union$"):
        facts_of(narrowed, overlay)


def test_an_exclusion_that_matches_nothing(overlay: Overlay) -> None:
    stale = dataclasses.replace(overlay, excluded=("Tag",))
    with pytest.raises(OverlayError) as info:
        facts_of(schema(), stale)
    assert str(info.value) == ("[excluded] names Tag, which is in no request or notification union")


def test_a_capability_the_schema_does_not_define(overlay: Overlay) -> None:
    rule = dataclasses.replace(overlay.capability_rules[0], requires="ask.url")
    wrong = dataclasses.replace(overlay, capability_rules=(rule,))
    with pytest.raises(OverlayError, match=r"^ClientCapabilities has no ask\.url$"):
        facts_of(schema(), wrong)


def test_an_error_code_the_schema_pins_differently(overlay: Overlay) -> None:
    errors = tuple(
        dataclasses.replace(e, code=-32098) if e.name == "TEAPOT" else e for e in overlay.errors
    )
    with pytest.raises(OverlayError, match=r"^TeapotError pins code -32099, overlay says -32098$"):
        facts_of(schema(), dataclasses.replace(overlay, errors=errors))


def test_a_meta_key_missing_from_the_schema(overlay: Overlay) -> None:
    quiet = schema()
    quiet["$defs"]["RequestParams"]["properties"]["_meta"]["description"] = "Anything."
    with pytest.raises(OverlayError) as info:
        facts_of(quiet, overlay)
    assert str(info.value) == "_meta key trace = 'io.example/trace' no longer appears in the schema"


def test_a_branch_without_the_tag_cannot_be_discriminated(overlay: Overlay) -> None:
    untagged = schema()
    del untagged["$defs"]["PingRequest"]["properties"]["method"]["const"]
    with pytest.raises(OverlayError, match="a branch of ClientRequest does not fix 'method'"):
        prepare(untagged, overlay)


def test_latest_version_must_match_the_pinned_revision(overlay: Overlay, tmp_path: Path) -> None:
    bumped = dataclasses.replace(PIN, revision="2031-01-01")
    with pytest.raises(OverlayError) as info:
        check_pairing(bumped, overlay)
    assert str(info.value) == (
        "overlay latest_version '2030-01-01' does not match the pinned revision "
        "'2031-01-01': update [protocol] in the overlay with the pin"
    )
    with pytest.raises(OverlayError, match="does not match the pinned revision"):
        render_package(schema(), tmp_path / "out", bumped, overlay)
    assert not (tmp_path / "out").exists()


def test_supported_versions_must_include_the_pinned_revision(overlay: Overlay) -> None:
    narrowed = dataclasses.replace(overlay, supported_versions=("2029-01-01",))
    with pytest.raises(OverlayError, match="leave out the pinned revision '2030-01-01'"):
        check_pairing(PIN, narrowed)


def test_a_revision_folder_is_loaded_and_paired(tmp_path: Path) -> None:
    folder = tmp_path / "2030-01-01"
    folder.mkdir()
    fields = dataclasses.asdict(PIN)
    (folder / "pin.toml").write_text(
        "".join(f"{key} = {json.dumps(value)}\n" for key, value in fields.items())
    )
    (folder / "overlay.toml").write_text(OVERLAY.replace('"2030-01-01"', '"2031-01-01"', 1))
    with pytest.raises(OverlayError, match="does not match the pinned revision"):
        load_revision(folder)
    (folder / "overlay.toml").write_text(OVERLAY)
    revision = load_revision(folder)
    assert (revision.package, revision.pin) == (PACKAGE, PIN)
