"""Bearer credentials in, challenges out; and the protected resource's metadata."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from snodo.auth import AccessToken, InvalidToken, ProtectedResource, Refused
from snodo.auth.challenge import MalformedAuthorization, bearer_token, challenge


class Table:
    """A verifier over a fixed table of tokens."""

    def __init__(self, tokens: dict[str, AccessToken]) -> None:
        self.tokens = tokens

    async def verify(self, token: str) -> AccessToken:
        if token not in self.tokens:
            raise InvalidToken("unknown")
        return self.tokens[token]


def test_bearer_token_parsing() -> None:
    assert bearer_token({}) is None
    assert bearer_token({"authorization": "Basic YTpi"}) is None
    assert bearer_token({"authorization": "Bearer abc.DEF-_~+/=="}) == "abc.DEF-_~+/=="
    assert bearer_token({"authorization": "bearer abc"}) == "abc"  # the scheme is case-blind
    assert bearer_token({"authorization": "  Bearer   abc  "}) == "abc"
    for bad in ("Bearer", "Bearer a b", "Bearer a, Bearer b", 'Bearer "abc"', "Bearer =abc"):
        with pytest.raises(MalformedAuthorization):
            bearer_token({"authorization": bad})


@given(st.text())
def test_bearer_token_never_returns_what_it_should_not(value: str) -> None:
    try:
        token = bearer_token({"authorization": value})
    except MalformedAuthorization:
        return
    assert token is None or re.fullmatch(r"[A-Za-z0-9\-._~+/]+=*", token)


def test_challenges_literally() -> None:
    url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    assert challenge(resource_metadata=url) == f'Bearer resource_metadata="{url}"'
    assert challenge(resource_metadata=url, scopes=["b", "a", "a"]) == (
        f'Bearer resource_metadata="{url}", scope="a b"'
    )
    assert challenge(
        resource_metadata=url,
        scopes=["files:write"],
        error="insufficient_scope",
        description="File write permission required",
    ) == (
        f'Bearer error="insufficient_scope", resource_metadata="{url}", scope="files:write", '
        'error_description="File write permission required"'
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"scopes": ['a" , evil="x']},
        {"scopes": ["two words"]},
        {"description": 'say "hi"'},
        {"resource_metadata": 'https://x/"'},
    ],
)
def test_challenge_values_cannot_break_out_of_their_quotes(bad: dict[str, object]) -> None:
    options: dict[str, object] = {"resource_metadata": "https://x/m"} | bad
    with pytest.raises(ValueError):
        challenge(**options)  # type: ignore[arg-type]


def test_metadata_document_and_paths() -> None:
    protected = ProtectedResource(
        "https://mcp.example.com/tenant/mcp",
        ["https://auth.example.com"],
        Table({}),
        scopes_supported=["files:read"],
        resource_name="Files",
        resource_documentation="https://mcp.example.com/docs",
    )
    assert protected.metadata() == {
        "resource": "https://mcp.example.com/tenant/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["files:read"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Files",
        "resource_documentation": "https://mcp.example.com/docs",
    }
    assert protected.metadata_url == (
        "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp"
    )
    assert protected.metadata_paths == {
        "/.well-known/oauth-protected-resource/tenant/mcp",
        "/.well-known/oauth-protected-resource",
    }
    root = ProtectedResource("https://mcp.example.com", ["https://a.example"], Table({}))
    assert root.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource"
    assert root.metadata_paths == {"/.well-known/oauth-protected-resource"}
    assert root.metadata() == {
        "resource": "https://mcp.example.com",
        "authorization_servers": ["https://a.example"],
        "bearer_methods_supported": ["header"],
    }


@pytest.mark.parametrize(
    ("resource", "servers", "options"),
    [
        ("mcp.example.com", ["https://a.example"], {}),
        ("https://mcp.example.com#frag", ["https://a.example"], {}),
        ("https://mcp.example.com/mcp?x=1", ["https://a.example"], {}),
        ("https://mcp.example.com/mcp", [], {}),
        ("https://mcp.example.com/mcp", ["a.example"], {}),
        ("https://mcp.example.com/mcp", ["https://a.example"], {"scopes_supported": ["a b"]}),
        (
            "https://mcp.example.com/mcp",
            ["https://a.example"],
            {"scopes_supported": ["offline_access"]},
        ),
    ],
)
def test_configuration_mistakes_fail_at_start(
    resource: str, servers: list[str], options: dict[str, object]
) -> None:
    with pytest.raises(ValueError):
        ProtectedResource(resource, servers, Table({}), **options)  # type: ignore[arg-type]


def test_implied_scopes_are_transitive() -> None:
    protected = ProtectedResource(
        "https://m.example/mcp",
        ["https://a.example"],
        Table({}),
        implied_scopes={"admin": ["write"], "write": ["read"], "read": ["admin"]},
    )
    assert protected.widen(["write"]) == {"write", "read", "admin"}  # cycles end
    assert protected.widen([]) == frozenset()


def test_scopes_every_request_needs() -> None:
    token = AccessToken("alice", frozenset({"read"}))
    protected = ProtectedResource(
        "https://m.example/mcp",
        ["https://a.example"],
        Table({"t": token, "u": AccessToken("bob", frozenset({"mcp", "read"}))}),
        required_scopes=["mcp"],
        scopes_supported=["mcp", "read"],
    )
    with pytest.raises(Refused) as refused:
        asyncio.run(protected.authorize({"authorization": "Bearer t"}))
    assert refused.value.status == 403
    assert refused.value.www_authenticate == (
        'Bearer error="insufficient_scope", '
        'resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", '
        'scope="mcp"'
    )
    with pytest.raises(Refused) as refused:
        asyncio.run(protected.authorize({}))
    assert refused.value.www_authenticate == (
        'Bearer resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", '
        'scope="mcp"'
    )
    authorized = asyncio.run(protected.authorize({"authorization": "Bearer u"}))
    assert authorized.principal == "bob"
    assert protected.insufficient(["write"]).www_authenticate == (
        'Bearer error="insufficient_scope", '
        'resource_metadata="https://m.example/.well-known/oauth-protected-resource/mcp", '
        'scope="mcp write"'
    )
