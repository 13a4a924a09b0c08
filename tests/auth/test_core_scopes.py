"""Per-item scopes in the transport-free core: checked against the scopes a transport
hands in, not checked where the transport does no OAuth (stdio), closed otherwise."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest

from snodo.auth import AccessToken, InvalidToken, ProtectedResource
from snodo.core.context import Context
from snodo.server import Server
from tests.support.paths import ROOT
from tests.support.wire import request


class Nobody:
    async def verify(self, token: str) -> AccessToken:
        raise InvalidToken("no tokens here")


def build(protected: bool) -> Server:
    authorization = (
        ProtectedResource("https://m.example/mcp", ["https://a.example"], Nobody())
        if protected
        else None
    )
    server = Server("core", "1.0.0", authorization=authorization)

    @server.tool(scopes=["files:write"])
    def write() -> str:
        return "written"

    @server.tool
    def granted(ctx: Context) -> str:
        return repr(None if ctx.scopes is None else sorted(ctx.scopes))

    @server.prompt(scopes=["files:read"])
    def summary(path: str) -> str:
        return f"Summarise {path}"

    @server.resource_template("file://{path}", scopes=["files:read"])
    def file(path: str) -> str:
        return path

    @server.completion("ref/prompt", "summary")
    @server.completion("ref/resource", "file://{path}")
    def paths(argument: str, value: str, context: object) -> list[str]:
        return ["secret.txt"]

    return server


def answer(server: Server, message: dict[str, Any], **options: Any) -> Any:
    reply = asyncio.run(server.handle(json.dumps(message).encode(), **options))
    return reply


def test_insufficient_scope_is_a_typed_error_naming_the_scopes() -> None:
    reply = answer(
        build(True),
        request("tools/call", {"name": "write"}, id=7),
        scopes=["files:read"],
        transport="http",
    )
    assert reply.response == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32600,
            "message": "Insufficient scope",
            "data": {"requiredScopes": ["files:write"]},
        },
    }
    assert reply.required_scopes == ("files:write",)


def test_granted_scopes_pass_and_reach_the_context() -> None:
    server = build(True)
    reply = answer(server, request("tools/call", {"name": "write"}), scopes=["files:write"])
    assert reply.response["result"]["content"] == [{"type": "text", "text": "written"}]
    assert reply.required_scopes is None
    reply = answer(server, request("tools/call", {"name": "granted"}), scopes=["b", "a"])
    assert reply.response["result"]["content"][0]["text"] == "['a', 'b']"


def test_a_protected_server_fails_closed_without_scopes_except_on_stdio() -> None:
    server = build(True)
    for transport in ("http", "memory", "legacy"):
        reply = answer(server, request("tools/call", {"name": "write"}), transport=transport)
        assert reply.required_scopes == ("files:write",), transport
    reply = answer(server, request("tools/call", {"name": "write"}), transport="stdio")
    assert reply.response["result"]["content"][0]["text"] == "written"


def test_an_unprotected_server_checks_nothing() -> None:
    reply = answer(build(False), request("tools/call", {"name": "granted"}))
    assert reply.response["result"]["content"][0]["text"] == "None"
    reply = answer(build(False), request("tools/call", {"name": "write"}))
    assert reply.response["result"]["content"][0]["text"] == "written"


def test_stdio_serves_scoped_items_from_the_environment() -> None:
    """Over stdio the spec has credentials come from the environment: no tokens, no checks."""
    message = request("tools/call", {"name": "read_file", "arguments": {"name": "notes.txt"}})
    done = subprocess.run(
        [sys.executable, "-m", "snodo", "run", "examples/protected.py:server"],
        cwd=ROOT,
        input=json.dumps(message) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["result"]
    assert result["content"] == [{"type": "text", "text": "remember the milk"}]


def test_oauth_and_an_authentication_hook_are_exclusive() -> None:
    from snodo.transports.http import HttpApp

    with pytest.raises(ValueError, match="not both"):
        HttpApp(build(True), authenticate=lambda headers: "someone")
    assert HttpApp(build(True)).authorization is not None
    assert HttpApp(build(False)).authorization is None


def test_completions_need_the_scopes_of_what_they_complete() -> None:
    server = build(True)
    for ref in (
        {"type": "ref/prompt", "name": "summary"},
        {"type": "ref/resource", "uri": "file://{path}"},
    ):
        message = request(
            "completion/complete", {"ref": ref, "argument": {"name": "path", "value": "s"}}
        )
        refused = answer(server, message, scopes=[])
        assert refused.required_scopes == ("files:read",), ref
        allowed = answer(server, message, scopes=["files:read"])
        assert allowed.response["result"]["completion"]["values"] == ["secret.txt"], ref
