"""FastMCP 4.2.3's OAuthProxy taking ID-JAGs from the loopback provider, for
tests/auth_proxy/test_id_jag.py; run with .venv-fastmcp's interpreter:

    python fastmcp_id_jag_server.py PROVIDER_URL PUBLIC_BASE CLIENT_ID PORT

Its issuer and resource are PUBLIC_BASE's (``aud`` and ``resource`` of the grants the
test feeds it, and snodo's proxy alike), whatever port it listens on. CLIENT_ID is
FastMCP's upstream client id, which it takes at its token endpoint without
registration: the client the grants name. The ``whoami`` tool answers the token's
subject.
"""

import sys

from fastmcp import FastMCP
from fastmcp.server.auth import OAuthProxy
from fastmcp.server.auth.identity_assertion import IdentityAssertion
from fastmcp.server.auth.providers.jwt import JWTVerifier
from fastmcp.server.dependencies import get_access_token
from key_value.aio.stores.memory import MemoryStore

provider, base, client_id, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

auth = OAuthProxy(
    upstream_authorization_endpoint=f"{provider}/authorize",
    upstream_token_endpoint=f"{provider}/token",
    upstream_client_id=client_id,
    upstream_client_secret="the upstream secret, never used here",
    token_verifier=JWTVerifier(jwks_uri=f"{provider}/jwks", issuer=provider, audience=client_id),
    base_url=base,
    jwt_signing_key="the fastmcp id-jag test's signing key",
    client_storage=MemoryStore(),
    identity_assertion=IdentityAssertion(trusted_issuers=[provider]),
)
mcp = FastMCP("fastmcp-id-jag", auth=auth)


@mcp.tool
def whoami() -> str:
    """The subject of the caller's token."""
    token = get_access_token()
    return "nobody" if token is None else str(token.claims.get("sub"))


if __name__ == "__main__":
    mcp.run(transport="http", host="127.0.0.1", port=port, show_banner=False)
