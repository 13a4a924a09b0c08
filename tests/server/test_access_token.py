"""``Context.access_token`` and the ``Token`` dependency where no token was verified:
None in memory and over stdio, and for a server with OAuth called by a caller that set
no token (the HTTP app sets one per request; tests/auth/test_http_auth.py reads a real
one's claims)."""

from __future__ import annotations

import json

from snodo import Context, Server
from snodo.auth import AccessToken, ProtectedResource
from snodo.core.context import ACCESS_TOKEN
from snodo.server.access import Token
from tests.support.wire import answer, request


class Never:
    async def verify(self, token: str) -> AccessToken:
        raise AssertionError("not called outside HTTP")


def build(authorization: ProtectedResource | None = None) -> Server:
    server = Server("tokens", "1.0.0", authorization=authorization)

    @server.tool
    def seen(ctx: Context, token: Token) -> str:
        return json.dumps([repr(ctx.access_token), repr(token)])

    return server


def text(server: Server, **options: object) -> str:
    found = answer(server, request("tools/call", {"name": "seen", "arguments": {}}), **options)
    result: str = found["result"]["content"][0]["text"]
    return result


def test_no_token_without_oauth() -> None:
    assert text(build()) == '["None", "None"]'


def test_a_token_is_read_only_where_oauth_granted_scopes() -> None:
    token = AccessToken("alice", frozenset({"read"}), claims={"email": "a@example.com"})
    mark = ACCESS_TOKEN.set(token)
    try:
        # Without OAuth the variable is never read, whatever it holds.
        assert text(build()) == '["None", "None"]'
        resource = ProtectedResource("http://127.0.0.1:1/mcp", ["http://127.0.0.1:2"], Never())
        seen = json.loads(text(build(resource), scopes=["read"]))
        assert seen == [repr(token), repr(token)]
    finally:
        ACCESS_TOKEN.reset(mark)
    resource = ProtectedResource("http://127.0.0.1:1/mcp", ["http://127.0.0.1:2"], Never())
    assert text(build(resource), scopes=["read"]) == '["None", "None"]'
