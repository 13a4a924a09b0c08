"""An MCP Apps view's CSP values: one source expression each (CSP3 grammar), refused at
registration otherwise, and refused by the client's ``view_ui`` when a server sends
them anyway; a host joining the accepted values into a directive gets exactly them."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.client import Client
from snodo.client.errors import ProtocolViolation
from snodo.client.transports import MemoryTransport
from snodo.extensions import apps as client_apps
from snodo.extensions.apps import App
from snodo.extensions.apps.csp import source_problem
from snodo.server import Server

GOOD = [
    "https:",
    "wss:",
    "https://api.example.com",
    "https://*.example.com",
    "*.example.com",
    "*",
    "api.example.com:8443",
    "https://api.example.com:*/v1/",
    "https://cdn.example.com/a%3Bb/file.js",
    "'self'",
    "'SELF'",
    "'unsafe-inline'",
    "'wasm-unsafe-eval'",
    "'nonce-r4nd0m+/_-=='",
    "'sha256-AbCd0123456789+/=='",
    "http://localhost:5173",
]
BAD = [
    "https://a.example.com; script-src *",  # a directive of its own
    "https://a.example.com, script-src *",  # a second policy
    "https://a.example.com https://b.example.com",  # two sources in one value
    "https://a.example.com\tb",
    "https://a.example.com\n",
    "'self",  # a keyword's quotes, both or none (bare, self is a host named self)
    "self'",
    "'https://a.example.com'",
    "'unsafe-everything'",
    "'nonce-'",
    "'sha1-AbCd'",
    "https://a.example.com/it's",
    "https://[::1]:80",
    "https://a.example.com/?q=1",
    "https://a.example.com/#x",
    "",
    "x" * 3000,
]


def view(csp: dict[str, Any]) -> Server:
    server = Server("apps", "1")
    App(server, "ui://v/view", "<!doctype html><p>hi</p>", csp=csp)
    return server


@pytest.mark.parametrize("value", GOOD)
def test_a_source_expression_is_accepted_and_carried_as_it_is(value: str) -> None:
    server = view({"connectDomains": [value], "resourceDomains": ["'self'", value]})

    async def main() -> Any:
        async with Client(MemoryTransport(server), extensions=client_apps.DECLARE) as client:
            return await client.read_resource("ui://v/view")

    read = asyncio.run(main())
    ui = client_apps.view_ui(read.contents[0])
    assert ui is not None and ui.csp is not None
    assert ui.csp.connect_domains == [value]
    assert ui.csp.resource_domains == ["'self'", value]


@pytest.mark.parametrize("value", BAD)
def test_anything_else_is_refused_at_registration_naming_it(value: str) -> None:
    with pytest.raises(ValueError, match=r"CSP connectDomains value"):
        view({"connectDomains": ["https://ok.example.com", value]})


def test_none_stands_alone_and_a_directive_is_a_list() -> None:
    view({"frameDomains": ["'none'"]})
    with pytest.raises(ValueError, match="'none' stands alone"):
        view({"frameDomains": ["'none'", "https://a.example.com"]})
    with pytest.raises(ValueError, match="must be a list"):
        view({"connectDomains": "https://a.example.com"})


@pytest.mark.parametrize("value", BAD[:6])
def test_the_client_refuses_a_view_whose_csp_would_break_the_policy(value: str) -> None:
    contents = {
        "uri": "ui://v/view",
        "mimeType": client_apps.APP_MIME_TYPE,
        "text": "<p>x</p>",
        "_meta": {"ui": {"csp": {"connectDomains": [value]}}},
    }
    with pytest.raises(ProtocolViolation, match="connectDomains"):
        client_apps.view_ui(contents)


@given(st.text(alphabet=st.characters(codec="ascii"), max_size=40))
def test_an_accepted_value_is_one_source_in_a_policy(value: str) -> None:
    if source_problem(value) is not None:
        return
    policy = f"connect-src 'self' {value}; frame-src 'none'"
    directives = [d.strip() for d in policy.split(";")]
    assert len(directives) == 2 and "," not in policy
    assert directives[0].split() == ["connect-src", "'self'", value]
    assert re.fullmatch(r"[\x21-\x7e]+", value)
