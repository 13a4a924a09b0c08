"""The server the proxy tests run with ``snodo run``: an ``OIDCProxy`` in front of the
loopback provider (tests/auth_proxy/idp.py), its store, its limits and whether it
fetches metadata documents from loopback named by the environment."""

from __future__ import annotations

import json
import os

from snodo.auth import OIDCProxy, ProxyLimits
from snodo.auth.exchange import TokenExchange
from snodo.auth.proxy_store import MemoryProxyStore, ProxyStore, RedisProxyStore, SQLiteProxyStore
from snodo.core.context import Context
from snodo.server import Server
from tests.support.idp import CLIENT_ID, CLIENT_SECRET

IDP = os.environ.get("TEST_IDP", "http://127.0.0.1:1")
BASE = os.environ.get("TEST_BASE", "http://127.0.0.1:2")
STORE = os.environ.get("TEST_STORE", "")
PER_ADDRESS = int(os.environ.get("TEST_REGISTRATIONS_PER_ADDRESS") or 1000)
"""The tests register many clients from one loopback address."""
LIMITS = json.loads(os.environ.get("TEST_LIMITS") or "{}")
"""More ``ProxyLimits`` fields, as JSON."""
ACCESS_LIFETIME = float(os.environ.get("TEST_ACCESS_LIFETIME") or 900)
"""Seconds the proxy's access tokens live: short where a test watches them refreshed."""
LOOPBACK_DOCUMENTS = os.environ.get("TEST_LOOPBACK_DOCUMENTS") == "1"
"""The tests' metadata documents are served on loopback: the development setting."""
SECRET = b"the proxy's shared secret, 32+ b"


def _store() -> ProxyStore:
    if STORE.startswith("redis://"):
        return RedisProxyStore(STORE)
    if STORE:
        return SQLiteProxyStore(STORE)
    return MemoryProxyStore()


server = Server(
    "proxied",
    "1.0.0",
    state_secret=b"k" * 32,
    authorization=OIDCProxy(
        config_url=f"{IDP}/.well-known/openid-configuration",
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        base_url=BASE,
        secret=SECRET,
        store=_store(),
        scopes_supported=["notes:read", "notes:write"],
        limits=ProxyLimits(**{"max_registrations_per_address": PER_ADDRESS, **LIMITS}),
        loopback_documents=LOOPBACK_DOCUMENTS,
        access_lifetime=ACCESS_LIFETIME,
        token_exchange=TokenExchange(issuer=IDP, client_id=CLIENT_ID, client_secret=CLIENT_SECRET),
    ),
)


@server.tool
def me(ctx: Context) -> str:
    """What a handler reads of the user who signed in at the provider."""
    token = ctx.access_token
    if token is None:
        return "nobody"
    claims, scopes = token.claims, " ".join(sorted(token.scopes))
    return f"{token.subject} {claims.get('email')} {claims.get('name')} {scopes}"


@server.tool
async def downstream(ctx: Context, audience: str) -> str:
    """A token for another service on the user's behalf: the provider's token the proxy
    holds for this sign-in, exchanged there (``ctx.exchange_token``)."""
    token = await ctx.exchange_token(audience=audience, scopes=["reports:read"])
    return token.access_token
