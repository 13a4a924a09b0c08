"""Resource templates: each RFC 6570 form a resource URI uses, values converted to the
handler's types (-32602 when one does not convert), every encoding of a path traversal,
an absolute path, a backslash or a NUL refused as "resource not found" (-32002 in a
legacy session) unless the template allows paths, and a fixed resource before templates."""

from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

import pytest

from snodo import Server
from snodo.legacy.methods import LegacyKernel
from snodo.legacy.session import LegacySession
from snodo.server.legacy_limits import LegacyLimits
from snodo.server.uri_templates import compile_template, unsafe_path
from tests.support.wire import answer, request


def build() -> Server:
    server = Server("templates", "1")

    @server.resource_template("notes://{name}")
    def note(name: str) -> str:
        return f"note {name!r}"

    @server.resource_template("files:///{+path}", allow_paths=False)
    def file(path: str) -> str:
        return f"file {path!r}"

    @server.resource_template("raw:///{+path}", allow_paths=True)
    def raw(path: str) -> str:
        return f"raw {path!r}"

    @server.resource_template("items://shop/{id}{?color,size}")
    def item(id: int, color: str = "any", size: Literal["s", "m", "l"] | None = None) -> str:
        return f"item {id!r} {color!r} {size!r}"

    @server.resource_template("tree://root{/parts*}")
    def tree(parts: list[str]) -> str:
        return f"tree {parts!r}"

    @server.resource_template("doc://{name}{.format}{#section}")
    def doc(name: str, format: str, section: str = "top") -> str:
        return f"doc {name!r} {format!r} {section!r}"

    @server.resource_template("flags://{on}/{ratio}")
    def flags(on: bool, ratio: float) -> str:
        return f"flags {on!r} {ratio!r}"

    @server.resource("notes://fixed")
    def fixed() -> str:
        return "the fixed one"

    return server


SERVER = build()


def read(uri: str) -> dict[str, Any]:
    return answer(SERVER, request("resources/read", {"uri": uri}, id=1))


def text(uri: str) -> str:
    response = read(uri)
    assert "result" in response, response
    return str(response["result"]["contents"][0]["text"])


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("notes://groceries", "note 'groceries'"),
        ("notes://caf%C3%A9%20list", "note 'café list'"),
        ("notes://fixed", "the fixed one"),  # a fixed resource before any template
        ("files:///docs/plan.md", "file 'docs/plan.md'"),
        ("raw:///docs/plan.md", "raw 'docs/plan.md'"),
        ("items://shop/42", "item 42 'any' None"),
        ("items://shop/42?size=m&color=dark%20red", "item 42 'dark red' 'm'"),
        ("items://shop/42?color=blue&unknown=1", "item 42 'blue' None"),
        ("tree://root", "tree []"),
        ("tree://root/a/b%20c/d", "tree ['a', 'b c', 'd']"),
        ("doc://guide.md", "doc 'guide' 'md' 'top'"),
        ("doc://guide.html#install", "doc 'guide' 'html' 'install'"),
        ("flags://true/0.5", "flags True 0.5"),
        ("flags://0/3", "flags False 3.0"),
    ],
)
def test_each_form_matches_and_converts(uri: str, expected: str) -> None:
    assert text(uri) == expected


@pytest.mark.parametrize(
    ("uri", "name"),
    [
        ("items://shop/forty-two", "id"),
        ("items://shop/4.2", "id"),
        ("items://shop/42?size=xl", "size"),
        ("flags://yes/0.5", "on"),
        ("flags://true/nan", "ratio"),
    ],
)
def test_a_value_that_does_not_convert_is_invalid_params_naming_it(uri: str, name: str) -> None:
    assert read(uri)["error"] == {
        "code": -32602,
        "message": f"Invalid value for {name!r} in the resource URI",
    }


TRAVERSALS = [
    "notes://..",
    "notes://%2E%2E",
    "notes://%2e%2e%2fetc%2fpasswd",
    "notes://..%5cwindows",
    "notes://%2Fetc%2Fpasswd",
    "notes://C%3A%5Cboot.ini",
    "notes://a%00b",
    "files:///docs/../../etc/passwd",
    "files:///docs/%2e%2e/%2E%2E/etc/passwd",
    "files:////etc/passwd",
    "files:///docs/..%5C..%5Cwin.ini",
    "tree://root/a/%2E%2E/b",
    "tree://root/a%2Fb",
]


@pytest.mark.parametrize("uri", TRAVERSALS)
def test_every_traversal_form_is_not_found(uri: str) -> None:
    assert read(uri)["error"] == {
        "code": -32602,
        "message": "Resource not found",
        "data": {"uri": uri},
    }


def test_a_template_that_allows_paths_takes_them() -> None:
    assert text("raw:///docs/../../etc/passwd") == "raw 'docs/../../etc/passwd'"
    assert text("raw:////etc/passwd") == "raw '/etc/passwd'"


def test_a_legacy_session_gets_the_revisions_own_not_found_code() -> None:
    async def scenario() -> dict[str, Any]:
        kernel = LegacyKernel(SERVER)
        session = LegacySession(LegacyLimits())
        initialize = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        for message in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
        ):
            await kernel.handle(session, message, transport="test", emit=lambda m: None)
        read = {"jsonrpc": "2.0", "id": 1, "method": "resources/read"}
        read["params"] = {"uri": "notes://%2E%2E"}
        reply = await kernel.handle(session, read, transport="test", emit=lambda m: None)
        assert reply.response is not None
        return reply.response

    response = asyncio.run(scenario())
    assert response["error"] == {
        "code": -32002,
        "message": "Resource not found",
        "data": {"uri": "notes://%2E%2E"},
    }


def test_the_template_list_shows_each_template_as_written() -> None:
    listed = answer(SERVER, request("resources/templates/list", {}, id=1))["result"]
    assert [t["uriTemplate"] for t in listed["resourceTemplates"]] == [
        "notes://{name}",
        "files:///{+path}",
        "raw:///{+path}",
        "items://shop/{id}{?color,size}",
        "tree://root{/parts*}",
        "doc://{name}{.format}{#section}",
        "flags://{on}/{ratio}",
    ]


def test_a_required_query_value_left_out_does_not_match() -> None:
    server = Server("query", "1")

    @server.resource_template("search://{?q}")
    def search(q: str) -> str:
        return q

    response = answer(server, request("resources/read", {"uri": "search://"}, id=1))
    assert response["error"]["message"] == "Resource not found"
    found = answer(server, request("resources/read", {"uri": "search://?q=a%26b"}, id=2))
    assert found["result"]["contents"][0]["text"] == "a&b"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("x://{a,b}", "names several variables"),
        ("x://{;a}", "is not supported"),
        ("x://{a:3}", "is not supported"),
        ("x://{a*}", "only {/var*} may explode"),
        ("x://{?a}/{b}", "only a {#...} may follow a query"),
        ("x://{a}{?b}{#c}{?d}", "one {?...} expression at most"),
        ("x://{a}/{a}", "repeats a variable"),
        ("x://plain", "has no {variable}"),
        ("x://{a", "unbalanced braces"),
    ],
)
def test_templates_this_subset_does_not_cover_are_refused(template: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        compile_template(template, {}, frozenset())


def test_a_parameter_type_a_uri_value_cannot_be_is_refused_at_registration() -> None:
    server = Server("bad", "1")
    with pytest.raises(ValueError, match="a URI value cannot be"):

        @server.resource_template("x://{a}")
        def bad(a: dict[str, str]) -> str:
            return ""

    with pytest.raises(ValueError, match="an exploded variable is a list"):

        @server.resource_template("x://r{/a*}")
        def worse(a: int) -> str:
            return ""


@pytest.mark.parametrize(
    ("value", "unsafe"),
    [
        ("plan.md", False),
        ("docs/plan.md", False),
        ("a..b", False),
        ("..", True),
        ("docs/../x", True),
        ("/etc", True),
        ("c:/x", True),
        ("a\\b", True),
        ("a\x00", True),
        (["a", "b"], False),
        (["a", ".."], True),
        (["a/b"], True),
    ],
)
def test_unsafe_path(value: Any, unsafe: bool) -> None:
    assert unsafe_path(value) is unsafe
