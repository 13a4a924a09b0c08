"""A server whose tools need OAuth scopes: snodo run oauth_server:server --transport http"""

import os

from snodo import Context, Server
from snodo.auth import JwtVerifier, ProtectedResource

# The MCP endpoint's canonical URI (RFC 8707): tokens must name it as their audience.
RESOURCE = os.environ.get("NOTES_RESOURCE", "https://mcp.example.com/mcp")
ISSUER = os.environ.get("NOTES_ISSUER", "https://auth.example.com")

server = Server(
    "notes",
    "1.0.0",
    authorization=ProtectedResource(
        RESOURCE,
        [ISSUER],
        JwtVerifier(ISSUER, RESOURCE),  # JWTs checked against the issuer's published keys
        scopes_supported=["notes:read", "notes:write"],
        required_scopes=["notes:read"],  # needed by every request
        implied_scopes={"notes:write": ["notes:read"]},  # a broader scope implies narrower
    ),
)

NOTES: list[str] = []


@server.tool
def read_notes() -> str:
    """Every note so far."""
    return "\n".join(NOTES)


@server.tool(scopes=["notes:write"])  # resources, templates and prompts take scopes= too
def add_note(ctx: Context, text: str) -> str:
    """Add a note, signed by the token's subject."""
    NOTES.append(f"{ctx.principal}: {text}")
    return f"{len(NOTES)} notes; your token grants {sorted(ctx.scopes or ())}"
