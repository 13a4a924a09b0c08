"""snodo.oauth.OAuth end to end against the fakes: the literal requests it makes to the
authorization server and the MCP server, and what it refuses to do."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from snodo.client import Client
from snodo.client.transports import HttpTransport
from snodo.oauth import (
    BrowserUserAgent,
    HeadlessUserAgent,
    MemoryTokenStorage,
    OAuth,
    OAuthError,
    Tokens,
)
from snodo.oauth.user_agent import check_authorization_url
from tests.oauth.fakes import AS1, AS2, MCP, PRM, REDIRECT, AuthServer, World, s256

T = TypeVar("T")


def make_oauth(world: World, **options: Any) -> OAuth:
    transport = world.transport()
    return OAuth(
        user_agent=HeadlessUserAgent(transport=transport),
        redirect_uri=REDIRECT,
        client_name="tests",
        transport=transport,
        **options,
    )


def run(world: World, oauth: OAuth, flow: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
    async def main() -> T:
        async with httpx.AsyncClient(transport=world.transport(), auth=oauth) as http:
            return await flow(http)

    return asyncio.run(main())


def rpc(method: str, id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {}}


async def post(http: httpx.AsyncClient, method: str, id_: int = 1) -> httpx.Response:
    return await http.post(MCP, json=rpc(method, id_))


def test_first_request_authorizes_with_pkce_resource_and_registration() -> None:
    server = AuthServer(AS1, scopes_supported=["mcp:read", "offline_access"], refresh_tokens=True)
    world = World({AS1: server}, challenge_scope="mcp:read")
    oauth = make_oauth(world)

    async def flow(http: httpx.AsyncClient) -> list[int]:
        return [
            (await post(http, "tools/list", 1)).status_code,
            (await post(http, "tools/call", 2)).status_code,
        ]

    assert run(world, oauth, flow) == [200, 200]
    # Discovery: the resource metadata the challenge named, then RFC 8414 at the issuer.
    assert world.metadata_requests == [PRM, f"{AS1}/.well-known/oauth-authorization-server"]
    assert server.registrations == [
        {
            "client_name": "tests",
            "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        }
    ]
    (query,) = server.authorizations
    state, challenge = query.pop("state"), query.pop("code_challenge")
    assert len(state) >= 32 and len(challenge) == 43
    assert query == {
        "response_type": "code",
        "client_id": f"client-{AS1}-1",
        "redirect_uri": REDIRECT,
        "scope": "mcp:read offline_access",
        "code_challenge_method": "S256",
        "resource": MCP,
    }
    ((form, header),) = server.token_requests
    verifier = form.pop("code_verifier")
    assert s256(verifier) == challenge and 43 <= len(verifier) <= 128
    assert form == {
        "grant_type": "authorization_code",
        "redirect_uri": REDIRECT,
        "code": "the-code",
        "resource": MCP,
        "client_id": f"client-{AS1}-1",
    }
    assert header is None
    # The second request went out with the token, no new authorization.
    sent = [header for header, _ in world.mcp_requests]
    assert sent == [None, "Bearer token-as.example.com-1", "Bearer token-as.example.com-1"]


def test_without_a_metadata_link_the_well_known_addresses_are_tried_in_order() -> None:
    server = AuthServer(AS1)
    world = World({AS1: server}, link_metadata=False, scopes_supported=["a", "b"])
    oauth = make_oauth(world)
    assert run(world, oauth, lambda http: post(http, "tools/list")).status_code == 200
    assert world.metadata_requests == [PRM, f"{AS1}/.well-known/oauth-authorization-server"]
    assert server.authorizations[0]["scope"] == "a b"  # scopes_supported, as listed


@pytest.mark.parametrize(
    "link",
    [
        "http://169.254.169.254/latest/meta-data/",  # another host (cloud metadata)
        "https://mcp.example.com:8443/.well-known/oauth-protected-resource/mcp",  # port
        "http://mcp.example.com/.well-known/oauth-protected-resource/mcp",  # scheme
        "https://internal.example.com/.well-known/oauth-protected-resource/mcp",
    ],
)
def test_a_metadata_link_off_the_server_origin_is_never_fetched(link: str) -> None:
    server = AuthServer(AS1)
    world = World({AS1: server}, metadata_link=link)
    assert run(world, make_oauth(world), lambda http: post(http, "tools/list")).status_code == 200
    assert link not in world.requests
    # The well-known addresses on the server's own origin instead, as with no link.
    assert world.metadata_requests == [PRM, f"{AS1}/.well-known/oauth-authorization-server"]


def test_a_metadata_link_on_the_server_origin_is_used() -> None:
    server = AuthServer(AS1)
    link = PRM.replace("https://mcp.example.com", "HTTPS://MCP.Example.com")
    world = World({AS1: server}, metadata_link=link)
    assert run(world, make_oauth(world), lambda http: post(http, "tools/list")).status_code == 200
    assert world.requests[1] == PRM  # the link itself, normalized by httpx


def test_no_scope_anywhere_means_no_scope_parameter() -> None:
    server = AuthServer(AS1, scopes_supported=["offline_access"])
    world = World({AS1: server})
    assert run(world, make_oauth(world), lambda http: post(http, "tools/list")).status_code == 200
    assert "scope" not in server.authorizations[0]


def test_step_up_asks_for_the_union_and_retries() -> None:
    server = AuthServer(AS1)
    world = World({AS1: server}, challenge_scope="mcp:basic", needs={"tools/call": ["mcp:write"]})
    oauth = make_oauth(world)

    async def flow(http: httpx.AsyncClient) -> list[int]:
        return [
            (await post(http, "tools/list", 1)).status_code,
            (await post(http, "tools/call", 2)).status_code,
        ]

    assert run(world, oauth, flow) == [200, 200]
    assert [a["scope"] for a in server.authorizations] == ["mcp:basic", "mcp:basic mcp:write"]
    assert len(server.registrations) == 1  # the registration is kept per issuer


def test_step_up_is_bounded() -> None:
    server = AuthServer(AS1)
    world = World({AS1: server}, challenge_scope="mcp:admin", always_forbid=True)
    oauth = make_oauth(world, max_authorizations=3)
    response = run(world, oauth, lambda http: post(http, "tools/list"))
    assert response.status_code == 403
    assert len(server.authorizations) == 3
    assert len(world.mcp_requests) == 4


def test_a_rejected_token_is_refreshed_before_authorizing_again() -> None:
    server = AuthServer(AS1, refresh_tokens=True)
    world = World({AS1: server})
    oauth = make_oauth(world)

    async def flow(http: httpx.AsyncClient) -> int:
        await post(http, "tools/list", 1)
        world.revoked.add("token-as.example.com-1")
        return (await post(http, "tools/list", 2)).status_code

    assert run(world, oauth, flow) == 200
    assert len(server.authorizations) == 1
    grants = [form["grant_type"] for form, _ in server.token_requests]
    assert grants == ["authorization_code", "refresh_token"]
    assert server.token_requests[1][0]["refresh_token"] == "refresh-1"
    assert server.token_requests[1][0]["resource"] == MCP


@pytest.mark.parametrize(
    ("iss_supported", "iss", "accepted"),
    [
        (True, "correct", True),
        (None, "omit", True),
        (True, "omit", False),
        (True, "wrong", False),
        (None, "wrong", False),
        (True, "normalized", False),
    ],
)
def test_the_iss_response_parameter(iss_supported: bool | None, iss: str, accepted: bool) -> None:
    server = AuthServer(AS1, iss_supported=iss_supported, iss=iss)
    world = World({AS1: server})
    oauth = make_oauth(world)
    if accepted:
        assert run(world, oauth, lambda http: post(http, "tools/list")).status_code == 200
    else:
        with pytest.raises(OAuthError, match="iss"):
            run(world, oauth, lambda http: post(http, "tools/list"))
        assert len(server.authorizations) == 1 and server.token_requests == []


def test_metadata_for_another_issuer_is_not_used() -> None:
    server = AuthServer(AS1, metadata_issuer="https://attacker.example.com")
    world = World({AS1: server})
    with pytest.raises(OAuthError, match="issuer"):
        run(world, make_oauth(world), lambda http: post(http, "tools/list"))
    assert server.registrations == [] and server.authorizations == []


def test_resource_metadata_for_another_resource_is_not_used() -> None:
    server = AuthServer(AS1)
    world = World({AS1: server}, resource="https://evil.example.com/mcp")
    with pytest.raises(OAuthError, match="evil"):
        run(world, make_oauth(world), lambda http: post(http, "tools/list"))
    assert server.authorizations == []


def test_a_new_authorization_server_gets_a_new_registration() -> None:
    first, second = AuthServer(AS1), AuthServer(AS2)
    world = World({AS1: first, AS2: second})
    oauth = make_oauth(world)

    async def flow(http: httpx.AsyncClient) -> int:
        await post(http, "tools/list", 1)
        world.current = AS2
        return (await post(http, "tools/call", 2)).status_code

    assert run(world, oauth, flow) == 200
    assert len(first.registrations) == 1 and len(second.registrations) == 1
    assert second.authorizations[0]["client_id"] == f"client-{AS2}-1"
    assert all(form["client_id"] != f"client-{AS1}-1" for form, _ in second.token_requests)


def _basic(header: str | None) -> str:
    assert header is not None and header.startswith("Basic ")
    return base64.b64decode(header[6:]).decode()


def test_token_endpoint_authentication_follows_the_registration() -> None:
    basic = AuthServer(
        AS1,
        auth_methods=["client_secret_basic"],
        registered_secret="s3cret",
        registered_method="client_secret_basic",
    )
    world = World({AS1: basic})
    run(world, make_oauth(world), lambda http: post(http, "tools/list"))
    assert basic.registrations[0]["token_endpoint_auth_method"] == "client_secret_basic"
    ((form, header),) = basic.token_requests
    assert _basic(header) == f"client-{AS1}-1:s3cret" and "client_secret" not in form

    post_ = AuthServer(
        AS1,
        auth_methods=["client_secret_post"],
        registered_secret="s3cret",
        registered_method="client_secret_post",
    )
    world = World({AS1: post_})
    run(world, make_oauth(world), lambda http: post(http, "tools/list"))
    ((form, header),) = post_.token_requests
    assert header is None and (form["client_id"], form["client_secret"]) == (
        f"client-{AS1}-1",
        "s3cret",
    )


def test_pre_registered_credentials_and_no_registration_endpoint() -> None:
    server = AuthServer(AS1, registration=False, auth_methods=["client_secret_basic"])
    world = World({AS1: server})
    oauth = make_oauth(world, client_id="pre", client_secret="shh")
    assert run(world, oauth, lambda http: post(http, "tools/list")).status_code == 200
    assert server.authorizations[0]["client_id"] == "pre"
    assert _basic(server.token_requests[0][1]) == "pre:shh"


def test_a_client_metadata_document_url_is_the_client_id_where_accepted() -> None:
    server = AuthServer(AS1, cimd=True)
    world = World({AS1: server})
    url = "https://client.example.com/metadata.json"
    assert (
        run(
            world, make_oauth(world, client_metadata_url=url), lambda http: post(http, "tools/list")
        ).status_code
        == 200
    )
    assert server.registrations == [] and server.authorizations[0]["client_id"] == url


def test_no_identity_at_all_is_an_error() -> None:
    world = World({AS1: AuthServer(AS1, registration=False)})
    with pytest.raises(OAuthError, match="no client identity"):
        run(world, make_oauth(world), lambda http: post(http, "tools/list"))


def test_client_credentials_grant() -> None:
    server = AuthServer(AS1, auth_methods=["client_secret_basic"])
    world = World({AS1: server}, challenge_scope="mcp:basic")
    oauth = make_oauth(world, grant="client_credentials", client_id="svc", client_secret="k")
    assert run(world, oauth, lambda http: post(http, "tools/list")).status_code == 200
    assert server.authorizations == []
    ((form, header),) = server.token_requests
    assert form == {"grant_type": "client_credentials", "scope": "mcp:basic", "resource": MCP}
    assert _basic(header) == "svc:k"


def test_tokens_from_storage_are_sent_only_to_their_resource() -> None:
    storage = MemoryTokenStorage()
    world = World({AS1: AuthServer(AS1)})
    world.tokens["kept"] = (AS1, [])
    oauth = make_oauth(world, storage=storage)

    async def flow(http: httpx.AsyncClient) -> None:
        await storage.set_tokens(Tokens("kept", AS1, resource="https://other.example.com/mcp"))
        await post(http, "tools/list")

    run(world, oauth, flow)
    assert world.mcp_requests[0][0] is None


def test_snodo_client_over_http_with_oauth() -> None:
    server = AuthServer(AS1)
    world = World({AS1: server}, challenge_scope="mcp:basic", needs={"tools/call": ["mcp:write"]})
    oauth = make_oauth(world)

    async def main() -> list[str]:
        http = httpx.AsyncClient(transport=world.transport(), auth=oauth)
        async with Client(HttpTransport(MCP, client=http)) as client:
            tools = await client.list_tools()
            await client.call_tool("t", {})
        return [tool.name for tool in tools]

    assert asyncio.run(main()) == ["t"]
    assert [a["scope"] for a in server.authorizations] == ["mcp:basic", "mcp:basic mcp:write"]
    bodies = [message["method"] for _, message in world.mcp_requests]
    assert bodies == ["tools/list", "tools/list", "tools/call", "tools/call"]


def test_client_http_hands_auth_to_the_http_client() -> None:
    oauth = OAuth()
    client = Client.http(MCP, auth=oauth)
    assert isinstance(client.transport, HttpTransport)
    assert client.transport.client.auth is oauth
    asyncio.run(client.transport.close())


def test_authorization_needs_a_user_agent() -> None:
    world = World({AS1: AuthServer(AS1)})
    oauth = OAuth(transport=world.transport())
    with pytest.raises(OAuthError, match="user agent"):
        run(world, oauth, lambda http: post(http, "tools/list"))


@pytest.mark.parametrize(
    "endpoint",
    [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "vscode://extension/run?cmd=x",
        "http://as.example.com/authorize",  # plain http off loopback
        "https:///authorize",  # no host
        "https://as.example.com/authorize x",  # a space: a second argument to an opener
    ],
)
def test_only_https_or_loopback_authorization_endpoints_reach_the_user_agent(
    endpoint: str,
) -> None:
    opened: list[str] = []
    server = AuthServer(AS1, authorization_endpoint=endpoint)
    world = World({AS1: server})
    oauth = make_oauth(world)
    oauth.user_agent = BrowserUserAgent(open_page=opened.append, timeout=5)
    with pytest.raises(OAuthError, match="refused to open the authorization address"):
        run(world, oauth, lambda http: post(http, "tools/list"))
    assert opened == []
    assert server.authorizations == []
    # A user agent handed such an address by anyone refuses it as well.
    for agent in (BrowserUserAgent(open_page=opened.append), HeadlessUserAgent()):
        with pytest.raises(OAuthError, match="refused to open"):
            asyncio.run(agent.authorize(endpoint, REDIRECT))
    assert opened == []


def test_which_authorization_addresses_a_user_agent_may_open() -> None:
    for allowed in (
        "https://as.example.com/authorize?x=1",
        "HTTPS://AS.example.com/authorize",
        "http://127.0.0.1:9000/authorize",
        "http://[::1]:9000/authorize",
        "http://localhost:9000/authorize",
        "http://127.8.9.10/authorize",
    ):
        assert check_authorization_url(allowed) == allowed
    for refused in (
        "http://10.0.0.1/authorize",
        "http://localhost.example.com/authorize",
        "ftp://as.example.com/authorize",
        "data:text/html,<script>alert(1)</script>",
        "https://as.example.com/a\nb",
    ):
        with pytest.raises(OAuthError):
            check_authorization_url(refused)


def test_redirect_query_is_parsed_from_the_callback() -> None:
    # The headless agent stops at the redirect URI and never requests it.
    world = World({AS1: AuthServer(AS1)})
    agent = HeadlessUserAgent(transport=world.transport())
    url = f"{AS1}/authorize?redirect_uri={REDIRECT}&state=xyz"
    callback = asyncio.run(agent.authorize(url, REDIRECT))
    assert urlsplit(callback).path == "/callback"
    assert dict(parse_qsl(urlsplit(callback).query)) == {
        "code": "the-code",
        "state": "xyz",
        "iss": AS1,
    }


def test_concurrent_requests_share_one_authorization() -> None:
    server = AuthServer(AS1)
    world = World({AS1: server})
    oauth = make_oauth(world)

    async def flow(http: httpx.AsyncClient) -> list[int]:
        answers = await asyncio.gather(*(post(http, "tools/list", i) for i in range(4)))
        return [response.status_code for response in answers]

    assert run(world, oauth, flow) == [200, 200, 200, 200]
    assert len(server.authorizations) == 1 and len(server.registrations) == 1


def test_a_token_about_to_expire_is_refreshed_before_it_is_sent() -> None:
    server = AuthServer(AS1, refresh_tokens=True)
    world = World({AS1: server})
    storage = MemoryTokenStorage()
    oauth = make_oauth(world, storage=storage)

    async def flow(http: httpx.AsyncClient) -> int:
        await post(http, "tools/list", 1)
        assert storage.tokens is not None
        storage.tokens = dataclasses.replace(storage.tokens, expires_at=time.time() + 5)
        return (await post(http, "tools/list", 2)).status_code

    assert run(world, oauth, flow) == 200
    grants = [form["grant_type"] for form, _ in server.token_requests]
    assert grants == ["authorization_code", "refresh_token"]
    sent = [header for header, _ in world.mcp_requests]
    assert sent == [None, "Bearer token-as.example.com-1", "Bearer token-as.example.com-2"]
