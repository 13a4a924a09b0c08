"""The server the runner's authorization-server scenarios test: an ``OIDCProxy`` in front
of the loopback provider (tests/support/idp.py), with the runner's client listed as a
first-party client so that its sign-in needs no consent page.

    TEST_IDP=http://127.0.0.1:P TEST_BASE=http://127.0.0.1:Q \
    TEST_CALLBACK=http://127.0.0.1:R/callback \
    python -m snodo run tests/conformance/authorization_server.py:server --transport http --port Q

``authorization-code-grant`` needs a client it can complete the sign-in with: its
client id (``CLIENT_ID``, given to the runner with ``--client-id``) and the redirect URI
of its callback server (``TEST_CALLBACK``, from the runner's ``--port``). A person at
the provider still signs in; tests/conformance/authorization_leg.py is that person.
"""

from __future__ import annotations

import os

from snodo.auth import OIDCProxy
from snodo.auth.first_party import FirstPartyClient
from snodo.core.context import Context
from snodo.server import Server
from tests.support.idp import CLIENT_ID as PROVIDER_CLIENT_ID
from tests.support.idp import CLIENT_SECRET as PROVIDER_CLIENT_SECRET

CLIENT_ID = "conformance-runner"
"""The runner's client id at the proxy (``--client-id``)."""

IDP = os.environ.get("TEST_IDP", "http://127.0.0.1:1")
BASE = os.environ.get("TEST_BASE", "http://127.0.0.1:2")
CALLBACK = os.environ.get("TEST_CALLBACK", "http://127.0.0.1:3000/callback")

server = Server(
    "authorization",
    "1.0.0",
    state_secret=b"a" * 32,
    authorization=OIDCProxy(
        config_url=f"{IDP}/.well-known/openid-configuration",
        client_id=PROVIDER_CLIENT_ID,
        client_secret=PROVIDER_CLIENT_SECRET,
        base_url=BASE,
        secret=b"the conformance proxy's secret!!",
        scopes_supported=["notes:read"],
        first_party_clients=[
            FirstPartyClient(CLIENT_ID, (CALLBACK,), name="MCP conformance runner")
        ],
    ),
)


@server.tool
def whoami(ctx: Context) -> str:
    """The subject the token names."""
    return ctx.access_token.subject if ctx.access_token is not None else "nobody"
