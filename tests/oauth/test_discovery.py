"""Challenge parsing and the discovery address lists, as the spec writes them out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from snodo.oauth import BearerChallenge, parse_challenge
from snodo.oauth.discovery import (
    authorization_server_metadata_urls,
    canonical_resource,
    protected_resource_metadata_urls,
    resource_allowed,
    same_origin,
)


def test_bearer_challenge_parameters() -> None:
    header = (
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="need \\"write\\""'
    )
    assert parse_challenge(header) == BearerChallenge(
        error="insufficient_scope",
        error_description='need "write"',
        scope="files:read files:write",
        resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource",
    )


def test_bearer_among_other_schemes_and_bare_tokens() -> None:
    assert parse_challenge('Basic realm="x", Bearer scope="a"').scope == "a"
    assert parse_challenge("Negotiate abc==, Bearer scope=q").scope == "q"
    assert parse_challenge("bearer error=invalid_token").error == "invalid_token"
    assert parse_challenge("Basic realm=x") == BearerChallenge()
    assert parse_challenge(None) == BearerChallenge()
    assert parse_challenge("") == BearerChallenge()


@given(st.text(max_size=200))
def test_any_header_parses_without_raising(header: str) -> None:
    assert isinstance(parse_challenge(header), BearerChallenge)


def test_protected_resource_metadata_addresses() -> None:
    assert protected_resource_metadata_urls("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert protected_resource_metadata_urls("https://example.com/") == [
        "https://example.com/.well-known/oauth-protected-resource"
    ]


def test_authorization_server_metadata_addresses() -> None:
    assert authorization_server_metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert authorization_server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/mcp/#frag") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com:8443") == "https://mcp.example.com:8443"


def test_which_resource_metadata_may_speak_for_a_server() -> None:
    server = "https://mcp.example.com/team/mcp"
    assert resource_allowed("https://mcp.example.com/team/mcp", server)
    assert resource_allowed("https://mcp.example.com", server)
    assert resource_allowed("https://mcp.example.com/team", server)
    assert not resource_allowed("https://mcp.example.com/tea", server)
    assert not resource_allowed("https://mcp.example.com/team/mcp/extra", server)
    assert not resource_allowed("https://evil.example.com/team/mcp", server)
    assert not resource_allowed("http://mcp.example.com/team/mcp", server)


def test_same_origin_is_scheme_host_and_port() -> None:
    server = "https://mcp.example.com/team/mcp"
    assert same_origin("https://mcp.example.com/.well-known/oauth-protected-resource/x", server)
    assert same_origin("HTTPS://MCP.Example.com:443/.well-known/x", server)
    assert same_origin("http://127.0.0.1/x", "http://127.0.0.1:80/mcp")
    for other in (
        "http://mcp.example.com/x",  # scheme
        "https://mcp.example.com:8443/x",  # port
        "https://evil.example.com/x",  # host
        "https://mcp.example.com.evil.example/x",
        "https://mcp.example.com@evil.example/x",  # userinfo: the host is evil.example
        "https://mcp.example.com:bad/x",  # no port at all
        "file:///etc/passwd",
        "/.well-known/oauth-protected-resource",  # relative: no origin
    ):
        assert not same_origin(other, server), other
