"""snodo's OAuth proxy taking ID-JAGs from the loopback provider, for
tests/auth_proxy/test_id_jag.py (``snodo run tests/auth_proxy/id_jag_server.py:server``).

``TEST_IDP`` is the provider (the one trusted issuer); ``TEST_BASE`` the public base
URL, the issuer and resource that grants name (as FastMCP's twin in
fastmcp_id_jag_server.py has them); ``TEST_CLIENT`` the first-party client the grants
are issued to; ``TEST_STORE`` an SQLite file the workers share, if given.
"""

from __future__ import annotations

import os

from snodo.auth import OAuthProxy
from snodo.auth.first_party import FirstPartyClient
from snodo.auth.id_jag import IdentityAssertions
from snodo.auth.proxy_store import MemoryProxyStore, ProxyStore, SQLiteProxyStore
from snodo.core.context import Context
from snodo.server import Server
from tests.support.idp import CLIENT_ID, CLIENT_SECRET

IDP = os.environ.get("TEST_IDP", "http://127.0.0.1:1")
BASE = os.environ.get("TEST_BASE", "https://mcp.example.test")
CLIENT = os.environ.get("TEST_CLIENT", "enterprise-client")
STORE = os.environ.get("TEST_STORE", "")


async def _no_sign_in(token: str, http: object) -> dict[str, str]:
    raise ValueError("this server signs nobody in through the browser")


def _store() -> ProxyStore:
    return SQLiteProxyStore(STORE) if STORE else MemoryProxyStore()


server = Server(
    "id-jag",
    "1.0.0",
    state_secret=b"j" * 32,
    authorization=OAuthProxy(
        authorize_url=f"{IDP}/authorize",
        token_url=f"{IDP}/token",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        base_url=BASE,
        verify=_no_sign_in,
        secret=b"the id-jag proxy's shared secret",
        store=_store(),
        scopes_supported=["notes:read", "notes:write"],
        identity_assertion=IdentityAssertions([IDP]),
        first_party_clients=[FirstPartyClient(CLIENT, name="Enterprise client")],
    ),
)


@server.tool
def whoami(ctx: Context) -> str:
    """The token's subject and the claims the grant carried."""
    token = ctx.access_token
    if token is None:
        return "nobody"
    return f"{token.subject} {token.claims.get('email')} {' '.join(sorted(token.scopes))}"
