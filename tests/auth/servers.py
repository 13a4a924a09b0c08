"""The protected server the HTTP tests serve with ``snodo run`` (addresses from the env)."""

from __future__ import annotations

import os
from typing import Any

from snodo.asking import elicitation
from snodo.auth import ProtectedResource
from snodo.auth.jwt import JwtVerifier
from snodo.core.context import Context
from snodo.core.result import input_required
from snodo.server import Server
from snodo.server.access import Token

RESOURCE = os.environ.get("TEST_RESOURCE", "http://127.0.0.1:1/mcp")
ISSUER = os.environ.get("TEST_ISSUER", "http://127.0.0.1:2")

server = Server(
    "protected",
    "1.0.0",
    state_secret=b"k" * 32,
    hide_unauthorized=os.environ.get("TEST_HIDE") == "1",
    authorization=ProtectedResource(
        RESOURCE,
        [ISSUER],
        JwtVerifier(ISSUER, RESOURCE),
        scopes_supported=["files:read", "files:write"],
        implied_scopes={"files:admin": ["files:write"], "files:write": ["files:read"]},
    ),
)

NAME = elicitation.form(
    "Name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
)


@server.tool
def whoami(ctx: Context) -> str:
    return f"{ctx.principal} {' '.join(sorted(ctx.scopes or ()))}"


@server.tool
def claims(ctx: Context, token: Token) -> str:
    """What a handler reads of the verified token: the dependency and the context's."""
    if token is None or ctx.access_token is not token:
        return "no token"
    exp = "exp" if token.expires_at == token.claims["exp"] else "no exp"
    roles = ",".join(token.claims.get("roles", ()))
    return f"{token.subject} {token.client_id} {token.claims.get('email')} {roles} {exp}"


@server.tool(scopes=["files:write"])
def write(ctx: Context) -> str:
    return "written"


@server.tool(scopes=["files:admin", "files:read"])
def purge(ctx: Context) -> str:
    return "purged"


@server.tool(scopes=["files:read"])
def ask(ctx: Context) -> Any:
    """Two rounds: the state of the first binds to the caller."""
    answer = elicitation.response(ctx, "name", NAME)
    if isinstance(answer, elicitation.Accepted):
        return f"hello {answer.content['name']} ({ctx.state_data})"
    return input_required({"name": NAME}, request_state=ctx.seal("round one"))


@server.tool
def dynamic(ctx: Context, target: str) -> str:
    """Scopes that depend on the arguments."""
    ctx.require_scopes([f"files:{target}"])
    return f"did {target}"


@server.tool(
    scopes=["files:admin"],
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    },
)
def relocate(**arguments: Any) -> str:
    """An admin tool whose argument travels in an Mcp-Param header too."""
    return f"relocated to {arguments['region']}"


@server.resource("file://secret", scopes=["files:admin"])
def secret() -> str:
    return "top secret"


@server.resource_template("file://docs/{name}", scopes=["files:write"])
def doc(name: str) -> str:
    return f"doc {name}"


@server.prompt(scopes=["files:write"])
def compose(topic: str) -> str:
    return f"Write about {topic}"
