"""snodo.asking.elicitation: form/URL builders, the restricted schema, and answer checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from snodo.asking import elicitation
from snodo.asking.elicitation import Accepted, Cancelled, Declined, FormValue
from snodo.core.errors import InvalidParams
from snodo.core.result import MISSING, input_required
from tests.support.mrtr import ctx, wire_valid

# Every property shape of the restricted subset, with every keyword it allows.
ALL_SHAPES: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "title": "Name",
            "description": "Your name",
            "minLength": 1,
            "maxLength": 20,
            "default": "Ada",
        },
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri"},
        "born": {"type": "string", "format": "date"},
        "seen": {"type": "string", "format": "date-time"},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150, "default": 30},
        "height": {"type": "number", "description": "m", "minimum": 0.5, "maximum": 2.5},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": False},
        "colour": {"type": "string", "enum": ["red", "green"], "default": "red"},
        "size": {
            "type": "string",
            "title": "Size",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            "default": "s",
        },
        "tags": {
            "type": "array",
            "title": "Tags",
            "items": {"type": "string", "enum": ["a", "b", "c"]},
            "minItems": 1,
            "maxItems": 2,
            "default": ["a"],
        },
        "pets": {
            "type": "array",
            "items": {
                "anyOf": [{"const": "cat", "title": "Cat"}, {"const": "dog", "title": "Dog"}]
            },
            "default": ["cat", "dog"],
        },
        "legacy": {
            "type": "string",
            "enum": ["x", "y"],
            "enumNames": ["Ex", "Why"],
            "default": "y",
        },
    },
    "required": ["name", "age"],
}


# --- form ----------------------------------------------------------------------------


def test_form_builds_the_spec_example_literally() -> None:
    request = elicitation.form(
        "Please provide your GitHub username",
        {
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "title": "GitHub Username",
                    "description": "Your GitHub username",
                }
            },
            "required": ["name"],
        },
    )
    assert request == {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Please provide your GitHub username",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "title": "GitHub Username",
                        "description": "Your GitHub username",
                    }
                },
                "required": ["name"],
            },
        },
    }
    wire_valid(request)


def test_form_accepts_every_shape_and_copies_it() -> None:
    schema = copy.deepcopy(ALL_SHAPES)
    request = elicitation.form("Tell me", schema)
    assert request["params"]["requestedSchema"] == ALL_SHAPES
    assert request["params"]["requestedSchema"] is not schema
    schema["properties"]["name"]["title"] = "changed"
    assert request["params"]["requestedSchema"]["properties"]["name"]["title"] == "Name"
    wire_valid(request)
    assert input_required({"who": request}).to_result()["inputRequests"]["who"] == request


def test_form_turns_tuples_into_lists() -> None:
    request = elicitation.form(
        "Pick",
        {
            "type": "object",
            "properties": {"c": {"type": "string", "enum": ("a", "b")}},
            "required": ("c",),
        },
    )
    assert request["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {"c": {"type": "string", "enum": ["a", "b"]}},
        "required": ["c"],
    }


def test_form_allows_an_empty_confirmation_form() -> None:
    request = elicitation.form("Proceed?", {"type": "object", "properties": {}})
    assert request["params"]["requestedSchema"] == {"type": "object", "properties": {}}
    wire_valid(request)


def prop(**extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": extra}}


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        ([], "requestedSchema"),
        ({"type": "object"}, "requestedSchema.properties"),
        ({"type": "array", "properties": {}}, "requestedSchema.type"),
        ({"properties": {}}, "requestedSchema.type"),
        ({"type": "object", "properties": {}, "additionalProperties": False}, "requestedSchema"),
        ({"type": "object", "properties": {}, "$defs": {}}, "requestedSchema"),
        ({"type": "object", "properties": {}, "$schema": 1}, "requestedSchema.$schema"),
        ({"type": "object", "properties": [], "required": []}, "requestedSchema.properties"),
        ({"type": "object", "properties": {"": {"type": "string"}}}, "requestedSchema.properties"),
        ({"type": "object", "properties": {}, "required": ["x"]}, "requestedSchema.required"),
        ({"type": "object", "properties": {}, "required": "x"}, "requestedSchema.required"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]},
            "requestedSchema.required",
        ),
        # nesting
        (prop(type="object", properties={}), "requestedSchema.properties.p.type"),
        (prop(type="array", items={"type": "object"}), "requestedSchema.properties.p.items"),
        (prop(type="array", items={"type": "integer", "enum": ["a"]}), "p.items.type"),
        (prop(type="array"), "requestedSchema.properties.p.items"),
        (prop(type=["string", "null"]), "requestedSchema.properties.p.type"),
        (prop(type="null"), "requestedSchema.properties.p.type"),
        (prop(), "requestedSchema.properties.p.type"),
        ("not a property", "requestedSchema"),
        # keywords outside each shape
        (prop(type="string", pattern="^a"), "p: unsupported keyword 'pattern'"),
        (prop(type="string", format="ipv4"), "p.format"),
        (prop(type="string", format=1), "p.format"),
        (prop(type="string", minimum=1), "unsupported keyword 'minimum'"),
        (prop(type="string", enumNames=["A"]), "unsupported keyword 'enumNames'"),
        (prop(type="string", const="a"), "unsupported keyword 'const'"),
        (prop(type="string", examples=["a"]), "unsupported keyword 'examples'"),
        (prop(type="integer", exclusiveMinimum=0), "unsupported keyword 'exclusiveMinimum'"),
        (prop(type="number", multipleOf=2), "unsupported keyword 'multipleOf'"),
        (prop(type="number", format="email"), "unsupported keyword 'format'"),
        (prop(type="boolean", enum=[True]), "unsupported keyword 'enum'"),
        (prop(type="string", enum=["a"], oneOf=[{"const": "a", "title": "A"}]), "either"),
        (prop(type="string", enum=["a"], minLength=1), "unsupported keyword 'minLength'"),
        (prop(type="array", items={"type": "string", "enum": ["a"]}, uniqueItems=True), "p:"),
        (prop(type="array", items={"type": "string", "enum": ["a"], "title": "x"}), "p.items"),
        (prop(type="array", items={"anyOf": [{"const": "a", "title": "A"}], "x": 1}), "p.items"),
        # wrong value types
        (prop(type="string", title=1), "p.title"),
        (prop(type="string", description=None), "p.description"),
        (prop(type="string", minLength=-1), "p.minLength"),
        (prop(type="string", maxLength=True), "p.maxLength"),
        (prop(type="string", maxLength=1.0), "p.maxLength"),
        (prop(type="string", minLength=3, maxLength=2), "minLength is greater than maxLength"),
        (prop(type="number", minimum="1"), "p.minimum"),
        (prop(type="number", maximum=False), "p.maximum"),
        (prop(type="number", maximum=float("inf")), "p.maximum"),
        (prop(type="number", minimum=2, maximum=1), "minimum is greater than maximum"),
        (prop(type="string", enum=[]), "p.enum"),
        (prop(type="string", enum=[1, 2]), "p.enum"),
        (prop(type="string", enum=["a", "a"]), "p.enum"),
        (prop(type="string", enum="a"), "p.enum"),
        (prop(type="string", enum=["a", "b"], enumNames=["A"]), "p.enumNames"),
        (prop(type="string", enum=["a"], enumNames=[1]), "p.enumNames"),
        (prop(type="string", oneOf=[]), "p.oneOf"),
        (prop(type="string", oneOf=[{"const": "a"}]), "p.oneOf[0]"),
        (prop(type="string", oneOf=[{"const": "a", "title": "A", "x": 1}]), "p.oneOf[0]"),
        (prop(type="string", oneOf=[{"const": 1, "title": "A"}]), "p.oneOf[0]"),
        (
            prop(type="string", oneOf=[{"const": "a", "title": "A"}, {"const": "a", "title": "B"}]),
            "p.oneOf",
        ),
        (prop(type="array", items={"anyOf": []}), "p.items.anyOf"),
        (prop(type="array", items={"anyOf": [{"const": "a"}]}), "p.items.anyOf[0]"),
        (prop(type="array", items={"type": "string", "enum": []}), "p.items.enum"),
        (
            prop(type="array", items={"type": "string", "enum": ["a"]}, minItems=-1),
            "p.minItems",
        ),
        (
            prop(
                type="array", items={"type": "string", "enum": ["a", "b"]}, minItems=2, maxItems=1
            ),
            "minItems is greater than maxItems",
        ),
        (prop(type="array", items={"type": "string", "enum": ["a"]}, minItems=2), "p.minItems"),
        # defaults that do not satisfy their own property
        (prop(type="string", default=1), "p.default"),
        (prop(type="string", maxLength=2, default="abc"), "p.default"),
        (prop(type="string", format="email", default="nobody"), "p.default"),
        (prop(type="integer", default=1.5), "p.default"),
        (prop(type="integer", default=True), "p.default"),
        (prop(type="number", default="1"), "p.default"),
        (prop(type="number", maximum=1, default=2), "p.default"),
        (prop(type="boolean", default=0), "p.default"),
        (prop(type="string", enum=["a"], default="b"), "p.default"),
        (prop(type="string", oneOf=[{"const": "a", "title": "A"}], default="A"), "p.default"),
        (prop(type="array", items={"type": "string", "enum": ["a"]}, default="a"), "p.default"),
        (prop(type="array", items={"type": "string", "enum": ["a"]}, default=["b"]), "p.default"),
        (
            prop(
                type="array",
                items={"type": "string", "enum": ["a", "b"]},
                maxItems=1,
                default=["a", "b"],
            ),
            "p.default",
        ),
    ],
)
def test_form_rejects_anything_outside_the_subset(schema: Any, path: str) -> None:
    with pytest.raises(ValueError, match=path.replace("$", r"\$").replace("[", r"\[")):
        elicitation.form("Ask", schema)


@pytest.mark.parametrize("message", ["", None, 3])
def test_form_and_url_need_a_message(message: Any) -> None:
    with pytest.raises(ValueError, match="message"):
        elicitation.form(message, {"type": "object", "properties": {}})
    with pytest.raises(ValueError, match="message"):
        elicitation.url(message, "https://example.com/")


# --- url -----------------------------------------------------------------------------


def test_url_builds_url_mode_literally() -> None:
    request = elicitation.url("Connect your account", "https://example.com/connect?flow=abc")
    assert request == {
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "message": "Connect your account",
            "url": "https://example.com/connect?flow=abc",
        },
    }
    wire_valid(request)
    assert elicitation.url("Dev", "http://localhost:8080/x")["params"]["url"] == (
        "http://localhost:8080/x"
    )


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "/relative/path",
        "example.com/path",
        "ftp://example.com/file",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,hi",
        "https://",
        "https:///path-only",
        "https://user:secret@example.com/",
        "https://example.com@evil.example/",
        "https://example.com/a b",
        "https://exämple.com/",
        "https://example.com:99999/",
        "https://example.com:port/",
        "https://[::1/",
        3,
    ],
)
def test_url_accepts_absolute_http_urls_only(bad: Any) -> None:
    with pytest.raises(ValueError, match="url"):
        elicitation.url("Go", bad)


# --- response ------------------------------------------------------------------------

FORM = elicitation.form("Tell me", ALL_SHAPES)
GOOD: dict[str, FormValue] = {
    "name": "Grace",
    "email": "grace@example.com",
    "site": "https://example.com/x?y=1#z",
    "born": "1906-12-09",
    "seen": "2026-07-28T12:30:00.5+02:00",
    "age": 85,
    "height": 1.6,
    "subscribe": True,
    "colour": "green",
    "size": "l",
    "tags": ["a", "c"],
    "pets": ["dog"],
    "legacy": "x",
}


def test_missing_answer_is_missing() -> None:
    assert elicitation.response(ctx(), "k", FORM) is MISSING
    assert elicitation.response(ctx(other={"action": "accept"}), "k", FORM) is MISSING


def test_accept_returns_checked_content() -> None:
    answer = elicitation.response(ctx(k={"action": "accept", "content": GOOD}), "k", FORM)
    assert answer == Accepted(GOOD)
    assert isinstance(answer, Accepted)
    assert type(answer.content["age"]) is int
    assert type(answer.content["height"]) is float


def test_accept_keeps_only_given_optional_fields_and_drops_unknown_ones() -> None:
    content = {"name": "Ada", "age": 36, "password": "hunter2", "extra": ["x"]}
    answer = elicitation.response(ctx(k={"action": "accept", "content": content}), "k", FORM)
    assert answer == Accepted({"name": "Ada", "age": 36})


def test_accept_without_content_is_fine_when_nothing_is_required() -> None:
    request = elicitation.form("Proceed?", {"type": "object", "properties": {}})
    assert elicitation.response(ctx(k={"action": "accept"}), "k", request) == Accepted({})


def test_decline_and_cancel() -> None:
    assert elicitation.response(ctx(k={"action": "decline"}), "k", FORM) == Declined()
    assert elicitation.response(ctx(k={"action": "cancel"}), "k", FORM) == Cancelled()
    # Content on a refusal means nothing and is not checked.
    with_junk = {"action": "decline", "content": {"age": "x"}}
    assert elicitation.response(ctx(k=with_junk), "k", FORM) == Declined()


def test_url_mode_accept_is_consent_with_no_content() -> None:
    request = elicitation.url("Sign in", "https://example.com/login")
    assert elicitation.response(ctx(k={"action": "accept"}), "k", request) == Accepted({})
    got = elicitation.response(ctx(k={"action": "accept", "content": {"a": "b"}}), "k", request)
    assert got == Accepted({})
    assert elicitation.response(ctx(k={"action": "cancel"}), "k", request) == Cancelled()
    assert elicitation.response(ctx(), "k", request) is MISSING


def test_a_request_without_mode_is_read_as_form() -> None:
    request = {
        "method": "elicitation/create",
        "params": {
            "message": "m",
            "requestedSchema": {"type": "object", "properties": {"n": {"type": "boolean"}}},
        },
    }
    got = elicitation.response(ctx(k={"action": "accept", "content": {"n": False}}), "k", request)
    assert got == Accepted({"n": False})


@pytest.mark.parametrize(
    "request_",
    [
        {"method": "sampling/createMessage", "params": {}},
        {"method": "elicitation/create"},
        {"method": "elicitation/create", "params": {"mode": "popup", "message": "m"}},
        {"method": "elicitation/create", "params": {"mode": "form", "message": "m"}},
    ],
)
def test_response_refuses_a_request_it_did_not_build(request_: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="request"):
        elicitation.response(ctx(k={"action": "accept"}), "k", request_)


SECRET = "s3cr3t-value"


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "accept",
        [],
        {},
        {"action": "yes"},
        {"action": "ACCEPT"},
        {"action": "accept", "content": SECRET},
        {"action": "accept", "content": [SECRET]},
        {"action": "accept", "content": {"name": SECRET}},  # age is required
        {"action": "accept", "content": {"name": SECRET, "age": None}},
        {"action": "accept", "content": {"name": SECRET, "age": 36, "x": {"nested": 1}}},
    ],
)
def test_malformed_answers_raise_invalid_params_without_echo(answer: Any) -> None:
    with pytest.raises(InvalidParams) as caught:
        elicitation.response(ctx(k=answer), "k", FORM)
    assert caught.value.message == "Invalid elicitation response for 'k'"
    assert caught.value.code == -32602
    assert caught.value.data is None
    assert SECRET not in str(caught.value.to_error())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", ""),  # minLength 1
        ("name", "x" * 21),  # maxLength 20
        ("name", 5),
        ("name", ["Ada"]),
        ("age", True),  # bool is not int
        ("age", 36.0),  # integer-valued float is not an integer
        ("age", 36.5),
        ("age", "36"),
        ("age", -1),
        ("age", 151),
        ("height", True),
        ("height", "1.6"),
        ("height", 0.4),
        ("height", 3),
        ("subscribe", 1),
        ("subscribe", "true"),
        ("colour", "blue"),
        ("colour", "Red"),
        ("size", "Small"),  # the title, not the const
        ("size", "m"),
        ("legacy", "Ex"),
        ("tags", []),  # minItems 1
        ("tags", ["a", "b", "c"]),  # maxItems 2
        ("tags", ["a", "a"]),  # a repeat is not a second choice
        ("tags", ["d"]),
        ("tags", "a"),
        ("pets", ["Cat"]),
        ("pets", ["cat", "cat"]),
    ],
)
def test_content_must_satisfy_the_schema(field: str, value: Any) -> None:
    content = {**GOOD, field: value}
    with pytest.raises(InvalidParams, match="Invalid elicitation response for 'k'"):
        elicitation.response(ctx(k={"action": "accept", "content": content}), "k", FORM)


@pytest.mark.parametrize("value", [0, 150, 42])
def test_integer_bounds_are_inclusive(value: int) -> None:
    got = elicitation.response(
        ctx(k={"action": "accept", "content": {"name": "A", "age": value}}), "k", FORM
    )
    assert got == Accepted({"name": "A", "age": value})


def test_lengths_count_code_points() -> None:
    request = elicitation.form(
        "m", {"type": "object", "properties": {"s": {"type": "string", "maxLength": 2}}}
    )
    ok = ctx(k={"action": "accept", "content": {"s": "é😀"}})
    assert elicitation.response(ok, "k", request) == Accepted({"s": "é😀"})


def format_request(fmt: str) -> dict[str, Any]:
    return elicitation.form(
        "m",
        {
            "type": "object",
            "properties": {"v": {"type": "string", "format": fmt}},
            "required": ["v"],
        },
    )


FORMAT_CASES = {
    "email": (
        ["a@b.co", "first.last+tag@sub.example.org", "user@localhost", "üser@exämple.de"],
        ["", "plain", "@example.com", "a@", "a@b@c", "a b@c.d", "a@b..c", "a@.b", "a@b.", "a@b\n"],
    ),
    "uri": (
        [
            "https://example.com",
            "mailto:a@b.c",
            "urn:isbn:0451450523",
            "file:///tmp/x",
            "http://[::1]:80/a%20b?q=1#f",
        ],
        [
            "",
            "example.com",
            "/path",
            "://x",
            "1http://x",
            "http://a b",
            "http:",
            "http://x/%zz",
            "http://exämple.com",
            "http://x/<y>",
        ],
    ),
    "date": (
        ["2026-07-28", "2024-02-29", "0001-01-01", "9999-12-31"],
        [
            "2023-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-01-32",
            "26-07-28",
            "2026-7-28",
            "20260728",
            "2026-07-28T00:00:00Z",
            "\uff12\uff10\uff12\uff16-07-28",
            "0000-01-01",
            " 2026-07-28",
        ],
    ),
    "date-time": (
        [
            "2026-07-28T12:30:00Z",
            "2026-07-28t12:30:00z",
            "2026-07-28T12:30:00.123456+05:30",
            "2026-07-28T23:59:60-00:00",
            "2024-02-29T00:00:00+23:59",
        ],
        [
            "2026-07-28",
            "2026-07-28T12:30:00",
            "2026-07-28 12:30:00Z",
            "2026-07-28T24:00:00Z",
            "2026-07-28T12:60:00Z",
            "2026-07-28T12:30:61Z",
            "2026-07-28T12:30Z",
            "2026-02-30T12:30:00Z",
            "2026-07-28T12:30:00+24:00",
            "2026-07-28T12:30:00+0530",
            "2026-07-28T12:30:00.Z",
        ],
    ),
}


@pytest.mark.parametrize(
    ("fmt", "value", "ok"),
    [(fmt, v, True) for fmt, (good, _) in FORMAT_CASES.items() for v in good]
    + [(fmt, v, False) for fmt, (_, bad) in FORMAT_CASES.items() for v in bad],
)
def test_formats(fmt: str, value: str, ok: bool) -> None:
    context = ctx(k={"action": "accept", "content": {"v": value}})
    if ok:
        assert elicitation.response(context, "k", format_request(fmt)) == Accepted({"v": value})
    else:
        with pytest.raises(InvalidParams):
            elicitation.response(context, "k", format_request(fmt))


def test_titled_multi_select_counts() -> None:
    request = elicitation.form(
        "m",
        {
            "type": "object",
            "properties": {
                "p": {
                    "type": "array",
                    "items": {
                        "anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]
                    },
                    "minItems": 2,
                }
            },
        },
    )
    ok = ctx(k={"action": "accept", "content": {"p": ["b", "a"]}})
    assert elicitation.response(ok, "k", request) == Accepted({"p": ["b", "a"]})
    with pytest.raises(InvalidParams):
        elicitation.response(ctx(k={"action": "accept", "content": {"p": ["a"]}}), "k", request)
